"""Where a distributed fit runs: a dask.distributed cluster started here (`local:N`, N worker
processes on 127.0.0.1, stopped with the command) or a running scheduler (`tcp://HOST:PORT`).
Every task goes through `Runner`, which waits with a timeout and turns dask's failures into one line
(a lost worker named, a scheduler that does not answer), so a fit never hangs."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import uuid
import warnings
from urllib.parse import urlparse

from rbrepro.distributed.errors import ClusterTimeout, ClusterUnavailable, WorkerLost
from rbrepro.errors import InvalidParameter
from rbrepro.settings import cluster_timeout

#: seconds one step of a fit (featurizing the partitions, one CG step, a prediction) may take
STEP_TIMEOUT_S = 3600.0


def parse_cluster(spec: str) -> tuple[str, int | str]:
    """("local", N) for `local:N`, ("address", spec) for `tcp://HOST:PORT`; anything else is refused."""
    text = str(spec).strip()
    if text.startswith("local:"):
        count = text.partition(":")[2]
        if not count.isdigit() or int(count) < 1:
            raise InvalidParameter(f"--cluster {spec!r}: local:N needs a positive number of workers N")
        return "local", int(count)
    parsed = urlparse(text)
    try:
        port = parsed.port
    except ValueError:  # a port that is not a number 0 ... 65535
        port = None
    if parsed.scheme == "tcp" and parsed.hostname and port:
        return "address", text
    raise InvalidParameter(f"--cluster {spec!r}: give local:N (N worker processes here) or tcp://HOST:PORT "
                           "(a running dask scheduler)")


def _probe(address: str, timeout_s: float) -> None:
    """Fail within timeout_s for each wait where nothing listens at the scheduler's address (dask itself
    would retry until its timeout), or where what listens sends no handshake: a dask server speaks first."""
    parsed = urlparse(address if "://" in address else f"tcp://{address}")
    try:
        sock = socket.create_connection((parsed.hostname, parsed.port), timeout=timeout_s)
    except OSError as exc:
        raise ClusterUnavailable(f"cannot reach the dask scheduler at {address} within {timeout_s:g} s: "
                                 f"{exc.strerror or type(exc).__name__}") from None
    with sock:
        try:
            first = sock.recv(1)
        except OSError:  # socket.timeout included
            first = None
    if not first:
        raise ClusterUnavailable(f"{address} accepted the connection but sent no dask handshake within "
                                 f"{timeout_s:g} s: is a dask scheduler listening there? (each wait of reaching "
                                 f"a scheduler has {timeout_s:g} s: $RBREPRO_CLUSTER_TIMEOUT)")


def _within(timeout_s: float, fn, what: str):
    """fn() once it returns within timeout_s; else ClusterUnavailable saying `what` got no reply. The
    wait runs in a daemon thread, which a process that gives up leaves behind without waiting on it."""
    import queue
    import threading

    answer: queue.Queue = queue.Queue()

    def run():
        try:
            answer.put((True, fn()))
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread as it is
            answer.put((False, exc))

    threading.Thread(target=run, daemon=True, name="rbrepro-cluster-connect").start()
    try:
        ok, value = answer.get(timeout=timeout_s)
    except queue.Empty:
        raise ClusterUnavailable(f"{what}: no reply within {timeout_s:g} s ($RBREPRO_CLUSTER_TIMEOUT)") from None
    if not ok:
        raise value
    return value


def connect(address: str, timeout_s: float | None = None, worker_timeout_s: float | None = None):
    """A Client of the scheduler at `address` with at least one worker, or ClusterUnavailable: every
    wait (connecting, the handshake, the first reply, a first worker) has its deadline, timeout_s
    (default settings.cluster_timeout()) each; `worker_timeout_s` for the worker where it differs."""
    from distributed import Client

    timeout_s = cluster_timeout() if timeout_s is None else timeout_s
    workers_s = timeout_s if worker_timeout_s is None else worker_timeout_s
    _probe(address, timeout_s)
    try:
        client = _within(2 * timeout_s, lambda: Client(address, timeout=f"{timeout_s}s"),
                         f"the dask scheduler at {address} answered its handshake but not the client")
    except (OSError, TimeoutError) as exc:
        raise ClusterUnavailable(f"cannot reach the dask scheduler at {address}: {exc}".splitlines()[0]) from None
    try:
        client.wait_for_workers(1, timeout=workers_s)
    except Exception:  # dask's own TimeoutError: nobody joined in time
        client.close()
        raise ClusterUnavailable(f"no dask worker joined the scheduler at {address} within {workers_s:g} s; "
                                 f"start one with `dask worker {address}`") from None
    return client


@contextlib.contextmanager
def open_cluster(spec: str, timeout_s: float | None = None, memory_limit="auto"):
    """A Client of the cluster `spec` names (parse_cluster); a local cluster is stopped on exit."""
    kind, value = parse_cluster(spec)
    timeout_s = cluster_timeout() if timeout_s is None else timeout_s
    cluster = None
    if kind == "local":
        from distributed import Client, LocalCluster

        cores = str(max(1, (os.cpu_count() or 1) // value))  # the cores shared out: no worker oversubscribes
        cluster = LocalCluster(n_workers=value, threads_per_worker=1, processes=True, host="127.0.0.1",
                               dashboard_address=None, memory_limit=memory_limit, silence_logs=logging.ERROR,
                               env={"NUMBA_NUM_THREADS": cores, "OMP_NUM_THREADS": cores,
                                    "OPENBLAS_NUM_THREADS": cores, "MKL_NUM_THREADS": cores})
        client = Client(cluster, timeout=f"{timeout_s}s")
    else:
        client = connect(value, timeout_s)
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


class Runner:
    """Tasks of one fit on a Client: submitted impure (every task runs; a lost result is recomputed
    from its task, which holds its inputs), gathered in order with a timeout."""

    def __init__(self, client, timeout_s: float = STEP_TIMEOUT_S):
        self.client = client
        self.timeout_s = timeout_s
        self._tag = uuid.uuid4().hex[:8]
        self._count = 0

    def submit(self, fn, *args):
        """fn(*args) on a worker. Arrays travel inside the task on purpose (dask warns about large
        graphs): the scheduler keeps them, so it can rerun the task when the worker holding its result
        dies, where scattered data would be lost with it."""
        self._count += 1
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
            return self.client.submit(fn, *args, key=f"rbrepro-{fn.__name__}-{self._tag}-{self._count}",
                                      pure=False)

    def map(self, fn, items, *args) -> list:
        """fn(item, *args) for each item, one task each (items may be futures)."""
        return [self.submit(fn, item, *args) for item in items]

    def gather(self, futures: list, what: str) -> list:
        """The futures' results in order; a task whose workers kept dying, or that outlived the
        timeout, is one line naming the worker or the step."""
        from distributed import TimeoutError as DaskTimeout
        from distributed import wait
        from distributed.scheduler import KilledWorker

        try:
            wait(futures, timeout=self.timeout_s)
            return self.client.gather(futures)
        except KilledWorker as exc:
            worker = getattr(exc.last_worker, "address", exc.last_worker)
            raise WorkerLost(f"{what}: dask worker {worker} died running it, and so did the "
                             f"{exc.allowed_failures} before it (task {exc.task}); the fit was stopped, "
                             "nothing was fitted") from None
        except (DaskTimeout, TimeoutError):
            for future in futures:
                future.cancel()
            raise ClusterTimeout(f"{what} did not finish within {self.timeout_s:g} s (a worker hangs, or the "
                                 "cluster is too small for the step); the fit was stopped") from None

    def worker_memory(self) -> dict[str, float]:
        """Each worker's address and memory limit in bytes (0: none set)."""
        workers = self.client.scheduler_info().get("workers", {})
        return {address: float(info.get("memory_limit") or 0) for address, info in workers.items()}

    def worker_headroom(self) -> dict[str, tuple[float, float, float]]:
        """Each limited worker's (limit, bytes it may use for a task, bytes its process holds now): dask
        pauses a worker above its `pause` fraction of the limit and its nanny kills it above
        `terminate`, so a task gets the smaller fraction of the limit less what the process holds."""
        import dask

        fractions = [f for f in (dask.config.get("distributed.worker.memory.pause", 0.8),
                                 dask.config.get("distributed.worker.memory.terminate", 0.95)) if f]
        fraction = min(fractions) if fractions else 1.0
        workers = self.client.scheduler_info().get("workers", {})
        out = {}
        for address, info in workers.items():
            limit = float(info.get("memory_limit") or 0)
            if limit > 0:
                held = float((info.get("metrics") or {}).get("memory") or 0)
                out[address] = (limit, limit * fraction - held, held)
        return out


def ordered_sum(parts: list):
    """The partitions' shares added in partition order (the same sum on every run), into the first
    share's copy: no stacked copy of all of them."""
    total = parts[0].copy()
    for part in parts[1:]:
        total += part
    return total
