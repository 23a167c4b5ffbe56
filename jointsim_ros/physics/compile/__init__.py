"""
The numba plumbing of the engine: decorators, containers by reference, packed buffers, the cache.

``compiler.py`` says which decorator an engine function takes and gives the engine its own code
library; ``containers.py`` passes the engine's namedtuples to kernels as one pointer each;
``flat.py`` packs containers into a few buffers; ``kernels.py`` makes a kernel's first call load
from numba's cache (compiling it in a process of its own when missing); ``clock.py`` is the
kernels' monotonic clock.  It imports nothing of the physics above it.
"""
