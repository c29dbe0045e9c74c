"""Loading the controller a cluster broker runs when elected."""

from __future__ import annotations

import pytest

from broker_core.server import cluster_membership
from broker_core.server.cluster_membership import ControllerUnavailableError, load_controller_class


def test_a_missing_controller_module_is_one_clear_error(monkeypatch) -> None:
    monkeypatch.setattr(cluster_membership, "CONTROLLER_MODULE", "broker_core.controller.not_built_here")
    with pytest.raises(ControllerUnavailableError, match="cannot run the controller: "
                       "broker_core.controller.not_built_here.KafkaController is not available"):
        load_controller_class()
