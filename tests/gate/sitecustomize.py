"""A test-only start-up hook: tests/test_interruptions.py puts this folder on PYTHONPATH of the
`slimdata convert` it runs, so that every Python process of that run (the parent and each
spawned worker) loads it.

With SLIMDATA_TEST_GATE=<folder> set, each item a writer encodes first leaves a file
`started-<pid>-<item index>` in that folder, then waits until a file `go` appears there. So
the test can send its signal while every worker is in the middle of a shard, on a fast or a
loaded machine alike, instead of hoping the timing works out.
"""

import os

_GATE = os.environ.get('SLIMDATA_TEST_GATE')

if _GATE:
    import time

    from slimdata.records import shards

    _encode_one = shards.encode_one

    def _gated_encode_one(encode, split, index, item):
        open(os.path.join(_GATE, f'started-{os.getpid()}-{index}'), 'w').close()
        deadline = time.monotonic() + 300
        while not os.path.exists(os.path.join(_GATE, 'go')) and time.monotonic() < deadline:
            time.sleep(0.01)
        return _encode_one(encode, split, index, item)

    shards.encode_one = _gated_encode_one
