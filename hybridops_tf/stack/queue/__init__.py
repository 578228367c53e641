"""Queued stack runs: one stack run's members as jobs in the shared store, taken by workers
on any number of runners (docs/stacks.md: Queued runs).

The jobs are procrastinate's (a PostgreSQL job queue: per-key job locks, retries, worker
heartbeats and stalled-job detection, cancellation), in the shared store's database; the run
and each member's place in it are hyops's tables (store/schema.py). Who may start when is
decided by the one dependency logic there is, stack/graph.py's Scheduler, replayed from what
the run recorded (dispatch.py); each member runs as `stack apply` runs it (stack/member.py).

dispatch.py: pure, the Scheduler replayed; tables.py: the run's rows; jobs.py: procrastinate
(app, task, deferring and cancelling in a transaction of ours); submit.py: `stack apply
--queue`; work.py and take.py: `stack work` and one member's job; lost.py: workers whose
heartbeat stopped; view.py: the merged run as a report.
"""
