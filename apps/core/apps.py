from django.apps import AppConfig
from django.conf import settings
from django.db.backends.signals import connection_created

from .readside import harden_connection


class CoreConfig(AppConfig):
    name = "apps.core"
    label = "core"

    def ready(self) -> None:
        # Rows already odd in the database read as the nearest supported value (readside.py).
        # Connected here, not at import, so it holds once the app registry runs (Django's way).
        connection_created.connect(harden_connection, dispatch_uid="memoryhub-readside")
        limit_blas_threads(settings.BLAS_THREADS)


def limit_blas_threads(threads: int) -> None:
    """numpy's BLAS (OpenBLAS) starts a thread per core for a product of a few thousand
    vectors and leaves them spinning after it returns: a search's in-process vector scan
    (apps/search/pipeline/reads/namespace_vectors.py) cost 38 ms of CPU for 1 ms of work.
    A request thread runs its products alone, as ONNX Runtime's threads do not spin either."""
    if threads > 0:
        # inspects the loaded libraries: once; the package ships no types
        from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

        threadpool_limits(limits=threads, user_api="blas")
