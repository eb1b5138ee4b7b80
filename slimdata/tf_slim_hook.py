"""The start-up hook: patch tf_slim the moment a program imports it, with no code change.

`slimdata patch-tf-slim install` writes a `.pth` file into the environment's site-packages
whose one line runs `install()` below at every interpreter start. That puts a finder first on
`sys.meta_path`, and does nothing else: this module imports only `sys`, so start-up loads no
TensorFlow, no tf_slim and no patch. A program that imports tf_slim, in any form (`import
tf_slim`, `from tf_slim import tfexample_decoder`, `from tf_slim.data import ...`, `import
tf_slim.data.tfexample_decoder`), runs `tf_slim.data.tfexample_decoder`; the finder makes that
module's loader apply `slimdata.tf_slim_patch` right after the module has run, before any code
can use or subclass its classes.

The finder finds nothing itself: it asks the finders after it for the module's spec, so
tf_slim is loaded from where it always is, by its own loader, and only that loader's
`exec_module` is wrapped.
"""

import sys

#: The tf_slim module whose loading applies the patch (it holds all that the patch changes).
TRIGGER = 'tf_slim.data.tfexample_decoder'


class TfSlimPatchFinder:
    """A `sys.meta_path` finder that patches tf_slim right after its decoder module runs."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != TRIGGER:
            return None
        for finder in sys.meta_path:
            find_spec = getattr(finder, 'find_spec', None)
            if _is_hook(finder) or find_spec is None:
                continue
            spec = find_spec(fullname, path, target)
            if spec is not None:
                _patch_after_exec(spec.loader)
                return spec
        return None


def install() -> bool:
    """Puts the finder first on `sys.meta_path`; False if it is there already."""
    if is_active():
        return False
    sys.meta_path.insert(0, TfSlimPatchFinder())
    return True


def is_active() -> bool:
    """True when the finder is on `sys.meta_path` in this interpreter."""
    return any(_is_hook(finder) for finder in sys.meta_path)


def _is_hook(finder) -> bool:
    # By name, not isinstance: a reloaded module defines a new class.
    return type(finder).__qualname__ == TfSlimPatchFinder.__qualname__ and \
        type(finder).__module__ == __name__


def _patch_after_exec(loader) -> None:
    exec_module = getattr(loader, 'exec_module', None)
    if exec_module is None:
        _warn(f'its loader {loader!r} has no exec_module to follow')
        return

    def exec_module_then_patch(module):
        exec_module(module)
        if module.__name__ == TRIGGER:  # a loader object may load other modules too
            _patch(module)

    try:
        loader.exec_module = exec_module_then_patch
    except AttributeError:
        _warn(f'its loader {loader!r} does not let the hook follow exec_module')


def _patch(module) -> None:
    # A start-up hook must never break the program's import of tf_slim: whatever goes wrong
    # while patching, tf_slim stays importable, unpatched, and a warning says why.
    try:
        from slimdata import tf_slim_patch
        tf_slim_patch.patch_module(module)
    except Exception as error:  # reported, see above
        _warn(f'patching failed: {error!r}')


def _warn(reason: str) -> None:
    import warnings
    warnings.warn(f'the slimdata start-up hook could not patch tf_slim ({reason}); tf_slim runs '
                  'unpatched. `slimdata patch-tf-slim status` checks the hook, '
                  '`slimdata patch-tf-slim uninstall` removes it.', RuntimeWarning, stacklevel=2)
