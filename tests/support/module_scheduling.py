"""How the suite's tests are shared out between pytest-xdist workers.

A work unit is a test module, so its tests run on one worker and share that
worker's module fixtures (one broker or cluster per module, started once).
Every Spark test forms one unit of its own, handed out first: one worker
starts the run's only JVM and works through the Spark tests while the other
works through the modules, then joins it there.
"""

from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling
from xdist.workermanage import WorkerController

SPARK_TEST_DIRS = ("tests/spark/", "tests/jobs/")
SPARK_UNIT = "spark"


def work_unit(nodeid: str) -> str:
    module = nodeid.split("::", 1)[0]
    return SPARK_UNIT if module.startswith(SPARK_TEST_DIRS) else module


class ModuleScheduling(LoadScopeScheduling):
    def _split_scope(self, nodeid: str) -> str:
        return work_unit(nodeid)

    def _assign_work_unit(self, node: WorkerController) -> None:
        if SPARK_UNIT in self.workqueue:
            self.workqueue.move_to_end(SPARK_UNIT, last=False)
        super()._assign_work_unit(node)
