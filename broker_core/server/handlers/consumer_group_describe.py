"""ConsumerGroupDescribe: epochs, assignor and members (current and target assignment) of consumer groups."""

from __future__ import annotations

from typing import Any, Mapping

from broker_core.server.context import BrokerContext
from broker_core.server.handlers.topic_ids import topic_id_of
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.consumer_group_describe import ConsumerGroupDescribeResponse

R = ConsumerGroupDescribeResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    return R(throttle_time_ms=0, groups=[_describe(ctx, group_id) for group_id in request.body.group_ids])


def _describe(ctx: BrokerContext, group_id: str) -> Any:
    coordinator = ctx.group_coordinator
    error = coordinator.group_manager.check(group_id, allow_empty_id=False)
    if error is not ErrorCode.NONE:
        return R.DescribedGroup(error_code=error, group_id=group_id)
    group = coordinator.consumer_groups.groups.get(group_id)
    if group is None:
        return R.DescribedGroup(error_code=ErrorCode.GROUP_ID_NOT_FOUND, group_id=group_id,
                                error_message=f"Group {group_id} not found.")
    return R.DescribedGroup(
        group_id=group_id,
        group_state=str(group.state),
        group_epoch=group.group_epoch,
        assignment_epoch=group.assignment_epoch,
        assignor_name=group.assignor_name or coordinator.consumer_groups.config.assignors[0],
        members=[
            R.Member(
                member_id=m.member_id,
                instance_id=m.instance_id,
                rack_id=m.rack_id,
                member_epoch=m.member_epoch,
                client_id=m.client_id,
                client_host=m.client_host,
                subscribed_topic_names=list(m.subscribed_topic_names),
                subscribed_topic_regex=m.subscribed_topic_regex,
                assignment=_assignment(ctx, m.assigned_partitions),
                target_assignment=_assignment(ctx, group.target_assignment.get(m.member_id, {})),
            )
            for m in group.members.values()
        ],
    )


def _assignment(ctx: BrokerContext, partitions: Mapping[str, frozenset[int]]) -> Any:
    return R.Assignment(topic_partitions=[
        R.TopicPartitions(topic_id=topic_id_of(ctx.metadata, topic), topic_name=topic, partitions=sorted(ps))
        for topic, ps in sorted(partitions.items())
    ])
