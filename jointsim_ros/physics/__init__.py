"""
The physics core: pure numpy + numba, never imports ROS.

Importing it registers a numba cache locator for the engine's own files.  numba keys a cached
function on its own source file only, so after an edit of, say, ``drives.py`` the cached
``step`` of ``step.py`` would keep calling the old compiled drive code.  The engine's locator
stamps every engine function with a hash of all engine sources instead: any edit of the engine
recompiles all of it, and an unchanged engine loads from the cache as before.

A cache index that no longer unpickles (its signatures name a class of a module that moved or
went, as after the package layout of issue 27) is stale, like one with another stamp: numba
would raise ``ModuleNotFoundError`` while reading it, before comparing stamps; here it compiles
and overwrites it instead.
"""
import hashlib
import pathlib
import pickle

from numba.core import caching

_ENGINE_DIR = pathlib.Path(__file__).resolve().parent


def _engine_stamp():
    """Return a hash of every Python source file of the engine."""
    digest = hashlib.sha256()
    for path in sorted(_ENGINE_DIR.rglob('*.py')):
        digest.update(str(path.relative_to(_ENGINE_DIR)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


_STAMP = _engine_stamp()


def _in_engine(py_file):
    try:
        return pathlib.Path(py_file).resolve().is_relative_to(_ENGINE_DIR)
    except (OSError, ValueError):
        return False


class _EngineStampMixin:
    """Stamp engine functions with the hash of all engine sources."""

    def get_source_stamp(self):
        """Return the engine-wide source hash."""
        return _STAMP

    @classmethod
    def from_function(cls, py_func, py_file):
        """Locate the cache of engine functions only."""
        if not _in_engine(py_file):
            return None
        return super().from_function(py_func, py_file)


class EngineInTreeCacheLocator(_EngineStampMixin, caching.InTreeCacheLocator):
    """The engine's cache in its ``__pycache__`` folders (a checkout or a writable install)."""


class EngineUserWideCacheLocator(_EngineStampMixin, caching.UserWideCacheLocator):
    """The engine's cache in the user-wide numba cache (a read-only install)."""


def _tolerate_unreadable_indexes():
    """Read an index that cannot be unpickled as an empty one (a cache miss), not an error."""
    cache_file = getattr(caching, 'IndexDataCacheFile', None)
    load_index = getattr(cache_file, '_load_index', None)
    if load_index is None or getattr(load_index, 'tolerates_unreadable', False):
        return

    def tolerant_load_index(self):
        try:
            return load_index(self)
        except (ImportError, AttributeError, EOFError, pickle.UnpicklingError):
            return {}

    tolerant_load_index.tolerates_unreadable = True
    cache_file._load_index = tolerant_load_index


def _register():
    try:
        classes = caching.CacheImpl._locator_classes
    except AttributeError:  # another numba layout: keep numba's own locators
        return
    for locator in (EngineUserWideCacheLocator, EngineInTreeCacheLocator):
        if locator not in classes:
            classes.insert(0, locator)


_register()
_tolerate_unreadable_indexes()
