"""The names a file gets from a star import of another file of the tree.

`from resnet import *` binds in the importing file every public name of resnet.py, the modules
resnet imported among them (`import numpy as np` there: `np` here). LibCST's scope analysis
sees no binding of `np` in the importing file, so `np.float` (numpy 1.24 removed it) was
neither ported nor reported (wenxinxu/resnet-in-tensorflow's `cifar10_train.py`).
`star_imported_names` reads each file's module-level star imports of the tree's files
(resolved as `python2_imports` resolves imports, Python 2's implicit relative ones too) and
the module-level imports of the files they name, through their own star imports: `{'np':
'numpy', 'plt': 'matplotlib.pyplot'}`. A module with `__all__` is left out (it exports only
what it lists), and so is a name two of them bind differently. The passes read a name so only
where the file itself binds it nowhere (`edits.PassMetadata.get_metadata`).
"""

import re
from typing import Dict, Iterator, Optional, Set, Tuple

from slimdata.port.python2_imports import IMPORT_LINE, ImportResolver

#: A module-level `from a import *` (column 0: a conditional one may not run).
_STAR = re.compile(r'^from[ \t]+(?P<dots>\.*)(?P<module>[\w.]*)[ \t]+import[ \t]+\*',
                   re.MULTILINE)
_ALL = re.compile(r'^__all__\b', re.MULTILINE)


def star_imported_names(sources: Dict[str, str]) -> Dict[str, Dict[str, str]]:
    """{path: {name: qualified name}} of the names each file of `sources` ({path: code}) gets
    from its star imports of other files (see the module docstring)."""
    resolver = ImportResolver(sources)
    exported: Dict[str, Optional[Dict[str, str]]] = {}

    def exports(path: str, seen: Tuple[str, ...]) -> Dict[str, str]:
        """The imported names `from <path's module> import *` binds."""
        if path in seen:
            return {}
        if path not in exported:
            code = sources[path]
            exported[path] = None if _ALL.search(code) else _merged(
                [dict(_imports(code))] + [exports(target, (*seen, path))
                                          for target in _star_targets(path, code, resolver)])
        return exported[path] or {}

    found = {}
    for path, code in sources.items():
        names = _merged([exports(target, (path,))
                         for target in _star_targets(path, code, resolver)])
        if names:
            found[path] = names
    return found


def _star_targets(path: str, code: str, resolver: ImportResolver) -> Iterator[str]:
    """The files `code`'s star imports name (the module's own: `resolve` lists its packages'
    `__init__.py` after it)."""
    for star in _STAR.finditer(code):
        yield from resolver.resolve(path, star['dots'], star['module'])[:1]


def _imports(code: str) -> Iterator[Tuple[str, str]]:
    """(name bound, qualified name) of the module-level imports of `code` (column 0: a
    conditional one may not run), but relative ones and `from __future__`."""
    for found in IMPORT_LINE.finditer(code):
        if found.group()[:1] in ' \t':
            continue
        if found['modules'] is not None:
            for part in found['modules'].split(','):
                words = part.split()
                if len(words) == 3 and words[1] == 'as':
                    yield words[2], words[0]
                elif len(words) == 1:
                    yield words[0].split('.')[0], words[0].split('.')[0]
            continue
        if found['dots'] or found['module'] in ('', '__future__'):
            continue
        for part in found['names'].split(','):
            words = part.split()
            if len(words) in (1, 3) and (len(words) == 1 or words[1] == 'as'):
                yield words[-1], f"{found['module']}.{words[0]}"


def _merged(parts) -> Dict[str, str]:
    """The names of `parts` (dicts), less private ones and those two parts bind differently."""
    merged: Dict[str, str] = {}
    clashes: Set[str] = set()
    for part in parts:
        for name, qualified in part.items():
            if name.startswith('_'):
                continue
            if merged.setdefault(name, qualified) != qualified:
                clashes.add(name)
    return {name: qualified for name, qualified in merged.items() if name not in clashes}
