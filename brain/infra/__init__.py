"""What carries the rules without knowing them: the database backend (``postgres``), statements
composed once (``prepared``), read replicas (``replicas``), the outbox that queues background work
(``queueing``), seams where a part above plugs into a part below (``hooks``), public ids (``ids``),
the environment helpers of the settings (``env``), orchestrators' probes (``probes``), where Brain
may connect (``outbound``), the answer when the database stops answering (``unavailable``), closing
a request's connections (``request_connections``), reachability checks (``health``), the counters
Prometheus reads and who may read them (``metrics``), and request ids and JSON log lines (``logs``)."""
