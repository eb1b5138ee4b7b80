"""Which files of a tree ran under Python 2: their own evidence, and their imports.

A file is Python 2 by its own text when Python 3 cannot parse it or it shows Python 2
(`python2.shows_python_2`). Many modules of a Python 2 repository show nothing of the kind
(seglink's `datasets/dataset_utils.py` only builds `tf.train.Feature`s: in Python 2 its `str`
values were bytes, in Python 3 protobuf refuses them), yet they ran under Python 2 all the
same: one interpreter runs a program and every module it imports. So a file is also Python 2
when it imports, directly or through other files of the tree, a file with evidence (it could
not have run under Python 3), and when such a file imports it (it ran in their interpreter).

Imports are read with a regular expression (Python 2 files do not parse in Python 3) and
resolved within the tree as Python 2 did: a name is looked up beside the importing file first
(Python 2's implicit relative imports), then as a dotted path ending any file's path
(`datasets.dataset_utils` is `datasets/dataset_utils.py` under any folder put on sys.path);
a single name that is not beside the file is looked up only at the tree's root, so that one of
many `utils.py` is not taken for another.
"""

import posixpath
import re
from typing import AbstractSet, Dict, Iterable, List, Set

#: `import a.b as c, d` and `from .a import b, c` (the first line of a parenthesised list).
IMPORT_LINE = re.compile(r'^[ \t]*(?:from[ \t]+(?P<dots>\.*)(?P<module>[\w.]*)[ \t]+import[ \t]+'
                     r'\(?(?P<names>[\w, \t]+)|import[ \t]+(?P<modules>[\w., \t]+))',
                     re.MULTILINE)
_AS = re.compile(r'[ \t]+as[ \t]+\w+')


def _module_names(code: str) -> Iterable[tuple]:
    """(leading dots, dotted name) of each module `code` may import: `from a import b` may
    import the module `a.b` as well as `a`."""
    for found in IMPORT_LINE.finditer(code):
        if found['modules'] is not None:
            for name in _AS.sub('', found['modules']).split(','):
                if name.strip():
                    yield '', name.strip()
            continue
        dots, module = found['dots'], found['module']
        if module:
            yield dots, module
        for name in _AS.sub('', found['names']).split(','):
            if name.strip():
                yield dots, f'{module}.{name.strip()}' if module else name.strip()


class ImportResolver:
    """Dotted module names to the paths of the tree's files."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths = frozenset(paths)
        self.by_suffix: Dict[str, List[str]] = {}
        for path in self.paths:
            parts = path[:-len('.py')].split('/')
            if parts[-1] == '__init__':
                parts = parts[:-1]
            for start in range(len(parts)):
                self.by_suffix.setdefault('.'.join(parts[start:]), []).append(path)

    def _in(self, folder: str, name: str) -> List[str]:
        base = posixpath.join(folder, *name.split('.'))
        return [path for path in (f'{base}.py', f'{base}/__init__.py') if path in self.paths]

    def resolve(self, importer: str, dots: str, name: str) -> List[str]:
        """The files importing `name` runs: the module's, and its packages' `__init__.py`."""
        return [found for path in self._modules(importer, dots, name)
                for found in [path, *self._packages(path, name)]]

    def _modules(self, importer: str, dots: str, name: str) -> List[str]:
        folder = posixpath.dirname(importer)
        if dots:  # explicit relative: one dot is the importer's package
            for _ in range(len(dots) - 1):
                folder = posixpath.dirname(folder)
            return self._in(folder, name)
        beside = self._in(folder, name)
        if beside:
            return beside
        if '.' not in name:
            return self._in('', name)
        return self.by_suffix.get(name, [])

    def _packages(self, path: str, name: str) -> List[str]:
        folder = posixpath.dirname(path)
        if path.endswith('/__init__.py'):
            folder = posixpath.dirname(folder)
        packages = []
        for _ in range(name.count('.')):
            packages += self._in(folder, '__init__')
            folder = posixpath.dirname(folder)
        return packages


def _closure(start: Iterable[str], edges: Dict[str, Set[str]],
             parents: Dict[str, str]) -> Set[str]:
    """What `edges` reach from `start`; `parents` gets, for each file reached, the one it was
    reached from (files in order, so that the reasons do not change from run to run)."""
    reached, todo = set(start), sorted(start)
    while todo:
        node = todo.pop(0)
        for other in sorted(edges.get(node, ())):
            if other not in reached:
                reached.add(other)
                parents[other] = node
                todo.append(other)
    return reached


def python_2_by_imports(sources: Dict[str, str], evident: AbstractSet[str]) -> Dict[str, str]:
    """{path: why} for the files of `sources` ({path: code}) that do not show Python 2
    themselves (the paths of `evident` do) but ran under it (see the module docstring); `why`
    is the chain of imports from a file that does."""
    resolver = ImportResolver(sources)
    imports: Dict[str, Set[str]] = {}
    imported_by: Dict[str, Set[str]] = {}
    for path, code in sources.items():
        for dots, name in _module_names(code):
            for target in resolver.resolve(path, dots, name):
                if target != path:
                    imports.setdefault(path, set()).add(target)
                    imported_by.setdefault(target, set()).add(path)
    parents: Dict[str, str] = {}
    importers = _closure(evident, imported_by, parents)  # could not have run under Python 3
    ran_in_python_2 = _closure(importers, imports, parents)  # what their interpreter ran
    return {path: _why(path, parents, imports) for path in sorted(ran_in_python_2 - evident)}


def _why(path: str, parents: Dict[str, str], imports: Dict[str, Set[str]]) -> str:
    """'A (Python 2) imports B, which is imported by C' from a file with evidence of its own
    to `path`."""
    chain = [path]
    while chain[-1] in parents:
        chain.append(parents[chain[-1]])
    chain.reverse()
    steps = [f'{"imports" if after in imports.get(before, ()) else "is imported by"} {after}'
             for before, after in zip(chain, chain[1:])]
    return f'{chain[0]} (Python 2) ' + ', which '.join(steps)
