"""The port's pipeline: its stages in order, each run where its trigger says, and a pass that
fails on one file reported without ending the run."""

import gc
import pathlib
import re

import libcst as cst
import pytest

from port_snippets import PYTHON_2_TAIL
from slimdata import cli
from slimdata.port import edits, facts, patterns, pipeline
from slimdata.port.edits import PortTransformer
from slimdata.port.facts import _BINDING_STATEMENTS, MatchedLines, TreeFacts, bound_by
from slimdata.port.qualified import every_statement
from test_port_tree import FIXTURE, LINE_NUMBERS, NET, PY3_SNIPPETS


class _Broken(PortTransformer):
    """A pass with a bug: it raises on every file holding `x`."""

    NAME = 'broken'

    @classmethod
    def has_work(cls, code, context):
        return 'x' in code

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        raise KeyError('a bug')


@pytest.fixture
def broken_pass(monkeypatch):
    monkeypatch.setattr(pipeline, 'STAGES', (*pipeline.STAGES, _Broken))


def test_a_pass_that_raises_leaves_its_file_as_is_and_the_run_goes_on(broken_pass):
    sources = {'a.py': 'x = 1\n', 'b.py': 'import tf_slim as slim\ny = slim.dataset.Dataset\n'}
    results, problems = pipeline.port_sources(sources, tf_upgrade=None)
    assert problems == ["a.py:1: internal error in pass broken (KeyError: 'a bug'); file left "
                        'as is']
    why = problems[0][len('a.py:1: '):]
    assert results['a.py'] == ('x = 1\n', [edits.Note(edits.NOT_PORTED, 1, why)])
    assert results['b.py'][0] == 'from slimdata import slim\ny = slim.dataset.Dataset\n'


def test_the_command_names_the_file_and_exits_1(broken_pass, tmp_path, capsys):
    root = tmp_path / 'repo'
    root.mkdir()
    (root / 'a.py').write_text('x = 1\n')
    (root / 'b.py').write_text('import tf_slim as slim\ny = slim.dataset.Dataset\n')
    status = cli.main(['port', str(root), str(tmp_path / 'out'), '--tf-upgrade', 'off'])
    out = capsys.readouterr().out
    assert status == 1
    assert 'a.py:1: internal error in pass broken' in out and 'file left as is' in out
    assert (tmp_path / 'out' / 'a.py').read_text() == 'x = 1\n'
    assert (tmp_path / 'out' / 'b.py').read_text().startswith('from slimdata import slim\n')


def test_every_stage_has_a_name_and_a_trigger_of_its_own():
    names = [stage.NAME for stage in pipeline.STAGES]
    assert all(names) and len(set(names)) == len(names)
    assert all(stage.has_work('', edits.Context('m.py')) is False for stage in pipeline.STAGES)



def _sources():
    """The port fixture's modules, the tests' Python 2 code and slimdata's own port."""
    root = pathlib.Path(__file__).resolve().parent.parent
    paths = [*sorted((root / 'tests' / 'port_fixture').rglob('*.py')),
             *sorted((root / 'slimdata' / 'port').rglob('*.py'))]
    return [path.read_text() for path in paths] + [PYTHON_2_TAIL]


def test_a_trigger_found_without_its_word_boundaries_is_found_where_it_is():
    """`patterns.found_in`: the same answer as the trigger's own search, line by line of real
    code, for every stage's trigger (each line a text of its own: most match nowhere)."""
    triggers = [stage.TRIGGER for stage in pipeline.STAGES if hasattr(stage, 'TRIGGER')]
    gated = [trigger for trigger in triggers if patterns._without_word_boundaries(trigger)]
    assert len(gated) >= 10  # most triggers start with \b
    for code in _sources():
        for text in [code, *code.splitlines()]:
            for trigger in triggers:
                assert patterns.found_in(trigger, text) is (trigger.search(text) is not None), (
                    trigger.pattern[:60], text[:80])
    # Only the \b before a character class (in one, \b is a backspace) or a negative
    # lookaround (there, removing it matches less) go: each case as the pattern answers.
    for pattern, text in ((r'\bx[\b]', 'x\b'), (r'\bx[\]\b]', 'x\b'), (r'\bx[]\b]', 'x\b'),
                          (r'x(?!\bfoo)', 'xfoo'), (r'\bx(?<!\bfoo)', 'x'),
                          (r'\bab\b[c]', 'ab c'), (r'\bab\b[c]', 'abc')):
        compiled = re.compile(pattern)
        for line in (text, 'a' + text, text + 'y'):
            assert patterns.found_in(compiled, line) is (compiled.search(line) is not None), (
                pattern, line)
    assert patterns._without_word_boundaries(re.compile(r'x(?!\bfoo)')) is None
    assert patterns._without_word_boundaries(re.compile(r'\bx[\b]\by')).pattern == r'x[\b]\by'
    assert patterns._without_word_boundaries(re.compile(r'\\b\bx')).pattern == r'\\bx'


def test_a_pattern_opening_with_a_line_start_is_gated_without_it():
    """A pattern that opens with a line's start and indentation (`(?m:^[ \\t]*import\\b)`, which
    `re` tries at every position) is gated by the rest (a literal `re` scans for): found
    exactly where the pattern's own search finds it, indented, after code on the line or in
    the middle of a word."""
    gated = {pattern: patterns.gate(pattern) for pattern in (
        re.compile(r'(?m:^[ \t]*(?:import|from)[ \t]+(?:cPickle|Queue)\b)'),
        re.compile(r'^[ \t]*from[ \t]+__future__\b', re.MULTILINE),
        re.compile(r'(?m:^[ \t]*x|y)'))}
    assert [gate.pattern for gate in gated.values()] == [
        r'(?m:(?:import|from)[ \t]+(?:cPickle|Queue)\b)', r'from[ \t]+__future__\b', '(?m:x|y)']
    # Without the multi-line flag `^` is the text's start: kept (no gate).
    assert patterns.gate(re.compile(r'^[ \t]*import\b')) is None
    for pattern in gated:
        for text in ('import cPickle', '  import Queue\n', 'a = 1; import cPickle',
                     'a = 1\n\tfrom Queue import Queue', 'reimport cPickle', 'imports Queue',
                     'from __future__ import division', 'x = 1  # from __future__ import',
                     '\n\n    from __future__ import print_function', 'x', '  x', 'a\ny',
                     'ax', ''):
            assert patterns.found_in(pattern, text) is (pattern.search(text) is not None), (
                pattern.pattern, text)


def test_matched_lines_are_those_of_each_match_counted_another_way():
    """`MatchedLines.matching`: the lines each match of each pattern starts in, goes on in and
    ends in, as counted from the text before the match and the match's own line ends; none
    for a pattern whose gate finds nothing."""
    code = _sources()[0] + 'x = """a\nprint\nb"""\n\n  import cPickle\nimportable = 1\n'
    searched = [re.compile(r'(?m:^[ \t]*import[ \t]+cPickle\b)'),
                re.compile(r'\b(?:print|import)\b'), re.compile(r'"""[^"]*"""'),
                re.compile(r'\bno_such_name\b'), re.compile(r'\n'), re.compile(r'(?=\n)')]
    for pattern in searched:
        expected = set()
        for found in pattern.finditer(code):
            first = code.count('\n', 0, found.start()) + 1
            last = first + found.group()[:-1].count('\n') if found.group() else first
            expected.update(range(first, last + 1))
        assert set(MatchedLines.matching(code, pattern).lines) == expected, pattern.pattern
    assert MatchedLines.matching(code, searched[3]).empty()
    assert MatchedLines.matching(code, *searched[:2]).lines == sorted(
        MatchedLines.matching(code, searched[0]).lines
        + MatchedLines.matching(code, searched[1]).lines)


def test_a_trigger_is_searched_alternative_by_alternative():
    """`found_in` searches each top-level alternative of a pattern alone (a `|` inside a
    group, a character class or escaped does not split it), and a pattern whose alternatives
    could match otherwise alone (a backreference, a conditional, a verbose pattern) whole; it
    answers as the pattern's own search."""
    split = [trigger for stage in pipeline.STAGES if hasattr(stage, 'TRIGGER')
             for trigger in [stage.TRIGGER] if len(patterns.alternatives(trigger)) > 1]
    assert len(split) >= 5

    def alternatives(pattern, flags=0):
        return [alternative.pattern
                for alternative in patterns.alternatives(re.compile(pattern, flags))]

    assert alternatives(r'a|b(c|d)|[|]|\||[]|]x|[^]|]y|[\]|]z|(?m:^v|w)') == [
        'a', 'b(c|d)', '[|]', r'\|', '[]|]x', '[^]|]y', r'[\]|]z', '(?m:^v|w)']
    assert alternatives(r'(a)|b\1') == [r'(a)|b\1']
    assert alternatives(r'(?P<x>a)|(?P=x)') == [r'(?P<x>a)|(?P=x)']
    assert alternatives(r'(a)?(?(1)b|c)|d') == [r'(a)?(?(1)b|c)|d']
    assert alternatives('a # x|y\n|b', re.VERBOSE) == ['a # x|y\n|b']
    assert alternatives('(?i)a|b') == ['(?i)a', 'b']
    assert alternatives('(?x: a # )\n | b )|c') == ['(?x: a # )\n | b )|c']  # a verbose group
    for pattern, flags in ((r'\bfoo\(|[|]\bbar|\bbaz\b', 0), ('(?i)x|Y', 0),
                           (r'(a)|b\1', 0), ('^q|z$', re.MULTILINE)):
        compiled = re.compile(pattern, flags)
        for text in ('foo(', 'a foo (', '|bar', 'x|barn', 'bazz', 'baz', 'X', 'y', 'bb',
                     'b', 'w\nq', 'z\nw', 'nothing'):
            assert patterns.found_in(compiled, text) is (compiled.search(text) is not None), (
                pattern, text)


#: A module each of the other passes has work in (a package's, for the relative imports).
OTHER_PASSES = """import cv2
import pickle
import random
import re
import time
import yaml
import StringIO
import contextlib2
import matplotlib
import numpy as np
from PIL import Image, ImageFont
from scipy.misc import logsumexp
import sibling
from absl import flags
matplotlib.use('Agg')
DATA_FORMAT = 'NCHW'
flags.DEFINE_string('steps', 5, 'steps to train')


def read(path, data, op):
    image = Image.open(StringIO.StringIO(data))
    with contextlib2.ExitStack():
        text = open(path, 'rU').read()
    word = re.match(r'(\\w+)', text).group(1).decode('utf-8')
    on_server = op.type in ['Variable', 'VariableV2']
    letter = random.sample(set(word), 1)
    known = word.encode('ascii') in ('Car', 'Van')
    size = ImageFont.load_default().getsize(word)
    with open(path) as f:
        cached = pickle.load(f), time.clock(), yaml.load(f), f == [], cv2.CV_AA
    return (cached, image, word, np.float(len(text)), np.asarray(data).tostring(), on_server,
            letter, size, known)


def old_tensorflow(tf, a, b):
    with tf.name_scope('old', [a, b]):
        return tf.concat(1, [tf.pack([a]), tf.mul(a, b)])
"""


def _corpus() -> dict:
    """The port fixture's modules, as they are and as Python 2 code (every LibCST pass has work
    in some of them), and the snippets of the tree tests."""
    sources = {path.relative_to(FIXTURE).as_posix(): path.read_text()
               for path in sorted(FIXTURE.rglob('*.py'))}
    sources.update({f'python_2/{path}': code + PYTHON_2_TAIL
                    for path, code in sources.items() if code})
    sources.update({f'snippet_{index}.py': code for index, code in enumerate(
        (*PY3_SNIPPETS, NET, LINE_NUMBERS))})
    sources.update({'package/__init__.py': '', 'package/sibling.py': 'x = 1\n',
                    'package/other.py': OTHER_PASSES,
                    'python_2/package/other.py': OTHER_PASSES + PYTHON_2_TAIL})
    return sources


@pytest.mark.slow
def test_the_passes_sharing_one_tree_port_as_passes_parsing_each_its_own(monkeypatch):
    """The LibCST passes share one parsed tree (and its metadata while no pass changes it); a
    port where each pass parses the code it is given, as the passes once did, is the same:
    the same files, the same notes on the same lines. Every pass has work in the corpus."""
    sources = _corpus()
    shared, problems = pipeline.port_sources(sources, tf_upgrade=None)
    run, ran = edits.ParsedFile.run, set()

    def run_then_parse(parsed, transformer):
        ran.add(transformer.NAME)
        run(parsed, transformer)
        parsed.__init__(parsed.code)  # the next pass gets a tree of its own

    monkeypatch.setattr(edits.ParsedFile, 'run', run_then_parse)
    assert pipeline.port_sources(sources, tf_upgrade=None) == (shared, problems)
    assert problems == []
    assert ran == {stage.NAME for stage in pipeline.STAGES
                   if isinstance(stage, type) and issubclass(stage, PortTransformer)}
    assert sum(code != sources[path] for path, (code, _) in shared.items()) >= 15


def _hook_classes(root=edits._Hooks):
    for subclass in root.__subclasses__():
        yield subclass
        yield from _hook_classes(subclass)


def _node_types_named(hint) -> set:
    """The LibCST node types a field's type annotation names, in unions and sequences too."""
    import typing
    named, stack = set(), [hint]
    while stack:
        argument = stack.pop()
        if isinstance(argument, type) and issubclass(argument, cst.CSTNode):
            named.add(argument)
        stack.extend(typing.get_args(argument))
    return named


def test_trivia_and_leaves_hold_only_trivia():
    """Whitespace, comments and punctuation (`_TRIVIA_TYPES`), which a walk skips, and the
    leaves a walk does not walk into (`_LEAF_TYPES`) hold nothing but trivia, in every node
    of real code (so no pass's node is skipped with them); each of their fields annotated as
    a node names trivia only (an abstract type: all its kinds trivia)."""
    import typing
    trivia, leaves = edits._TRIVIA_TYPES, edits._LEAF_TYPES
    found = set()
    for code in _sources()[:30]:
        stack = [cst.parse_module(code)]
        while stack:
            node = stack.pop()
            children = node.children
            if type(node) in trivia | leaves:
                found.add(type(node))
                assert all(type(child) in trivia for child in children), type(node)
            stack.extend(children)
    assert len(found) >= 20
    for kind in trivia | leaves:
        for hint in typing.get_type_hints(kind).values():
            for node in _node_types_named(hint):
                assert edits._concrete_types((node,)) <= trivia, (kind, node)


def test_a_walk_skips_trivia_but_where_a_class_has_a_method_for_them():
    """A pass with no method for any trivia type walks none of their own nodes; one with a
    method for one walks them all, as does one with `SKIPS_TRIVIA = False`."""
    code = 'import os  # a\n\n# b\nx = f(a, b)  # c\n'
    seen = []

    class Names(PortTransformer):
        def visit_Name(self, node):
            seen.append(node.value)

    class Comments(PortTransformer):
        def visit_Comment(self, node):
            seen.append(node.value)

    class Everything(PortTransformer):
        SKIPS_TRIVIA = False

        def on_leave(self, original_node, updated_node):
            seen.append(type(original_node).__name__)
            return super().on_leave(original_node, updated_node)

    assert Names._trivia == edits._TRIVIA_TYPES
    assert Comments._trivia == frozenset()  # a comment is in an empty line or a line's end
    assert Everything._trivia == frozenset()
    edits.ParsedFile(code).run(Names(edits.Context('m.py')))
    assert seen == ['os', 'x', 'f', 'a', 'b']
    seen.clear()
    edits.ParsedFile(code).run(Comments(edits.Context('m.py')))
    assert seen == ['# a', '# b', '# c']
    seen.clear()
    edits.ParsedFile(code).run(Everything(edits.Context('m.py')))
    assert {'Comment', 'Comma', 'SimpleWhitespace', 'Newline', 'EmptyLine'} <= set(seen)


def test_passes_skipping_trivia_port_as_passes_walking_every_node(monkeypatch):
    """The passes walk no whitespace, comment or punctuation node they have no method for;
    walking every node they make the same files and the same notes."""
    sources = _corpus()
    skipping = pipeline.port_sources(sources, tf_upgrade=None)
    walked = []
    on_leave = edits.KeepsUnchanged.on_leave

    def counted(transformer, original_node, updated_node):
        walked.append(type(original_node))
        return on_leave(transformer, original_node, updated_node)

    monkeypatch.setattr(edits.KeepsUnchanged, 'on_leave', counted)
    for kind in _hook_classes():
        monkeypatch.setattr(kind, '_trivia', frozenset())
    assert pipeline.port_sources(sources, tf_upgrade=None) == skipping
    every_node = len(walked)
    walked.clear()
    monkeypatch.undo()
    monkeypatch.setattr(edits.KeepsUnchanged, 'on_leave', counted)
    assert pipeline.port_sources(sources, tf_upgrade=None) == skipping
    assert len(walked) < 0.8 * every_node  # the trivia nodes' own nodes are not walked


@pytest.mark.slow
def test_passes_that_filter_statements_port_as_passes_visiting_all(monkeypatch):
    """A pass with `FILTERS_STATEMENTS` walks only the statements its pattern matches (the
    names pass: less those using only names it leaves alone; division: those Python's tree
    shows a division in), a pass with `STATEMENTS_ONLY`
    no expression; the same passes visiting every statement and expression make the same
    files and the same notes. Every filtering pass skips statements in the corpus and has
    work in it."""
    sources = _corpus()
    sources['scopes.py'] = ('import tensorflow as tf\nfrom tensorflow import layers as tfl\n\n\n'
                            'def block(net, size):\n    half = size / 2\n'
                            "    with tf.name_scope('block', [net]):\n"
                            '        net = tfl.conv2d(net, half, 3)\n    return net\n')
    # `slim` is rebound (its import rewritten): its uses are left, but for a name the
    # successor lacks, which is reported.
    sources['rebound.py'] = ('import tensorflow.contrib.slim as slim\n\n\n'
                             'def net(images):\n    net = slim.conv2d(images, 8, 3)\n'
                             '    return slim.no_such_layer(net)\n')
    # A division in a decorator, on a line before the definition's own.
    sources['decorated.py'] = ('import functools\n\n\n@functools.lru_cache(maxsize=64 / 3)\n'
                               'def cached(n):\n    print n\n    return n\n')
    skipped = {}
    on_visit = PortTransformer.on_visit

    def counted(transformer, node):
        visited = on_visit(transformer, node)
        skipped[transformer.NAME] = max(skipped.get(transformer.NAME, 0),
                                        len(transformer._skipped))
        return visited

    monkeypatch.setattr(PortTransformer, 'on_visit', counted)
    filtered = pipeline.port_sources(sources, tf_upgrade=None)
    statements_only = {stage.NAME for stage in pipeline.STAGES
                       if getattr(stage, 'STATEMENTS_ONLY', False)}
    assert statements_only >= {'relative imports'}
    assert all(skipped.get(name, 0) > 0 for name in statements_only), skipped
    for stage in pipeline.STAGES:
        if isinstance(stage, type) and issubclass(stage, PortTransformer):
            monkeypatch.setattr(stage, 'lines_to_visit', lambda transformer: None)
            monkeypatch.setattr(stage, 'STATEMENTS_ONLY', False)
    assert pipeline.port_sources(sources, tf_upgrade=None) == filtered
    filtering = {stage.NAME for stage in pipeline.STAGES
                 if getattr(stage, 'FILTERS_STATEMENTS', False)}
    assert filtering >= {'names', 'tf.layers', 'scope values', 'division', 'binary reads',
                         'bytes literals', 'flag defaults', 'resource variables', 'dict views',
                         'text and bytes', 'numpy names', 'OpenCV names', 'tostring',
                         'Python removals', 'yaml load', 'scipy.misc', 'open modes',
                         'random sample', 'collections.abc', 'match decode', 'font getsize',
                         'module successors', 'relative imports', 'matplotlib use',
                         'pickle files', 'TensorFlow 0.x', 'data format'}
    assert all(skipped.get(name, 0) > 0 for name in filtering), skipped
    changed_by = {note.message for _, notes in filtered[0].values() for note in notes}
    assert [note.line for note in filtered[0]['rebound.py'][1]
            if 'no_such_layer' in note.message and 'is not in the installed' in note.message
            ] == [6]
    assert any('old_div' in message for message in changed_by)
    assert '64 // 3' in filtered[0]['decorated.py'][0]
    assert any('values=' in message for message in changed_by)
    assert any('tf.layers.conv2d(...) ->' in message for message in changed_by)


def test_each_parser_reads_a_python_2_file_once(monkeypatch):
    """The Python 2 stage's check that its result is Python 3 and the indentation stage's
    LibCST parse leave their trees to the LibCST passes: the code they return is parsed by
    Python once and by LibCST once."""
    code = ('import tensorflow as tf\nslim = tf.contrib.slim\n\n\ndef f(x):\n'
            '\tif x:\n\t\tprint x\n\treturn slim.flatten(x) / 2\n\n\ndef g(y):\n'
            '    return y\n')
    parses = {'ast': [], 'libcst': []}
    for name, module in (('ast', pipeline.ast), ('libcst', cst)):
        parse = module.parse if name == 'ast' else module.parse_module
        monkeypatch.setattr(module, 'parse' if name == 'ast' else 'parse_module',
                            lambda source, *args, _parse=parse, _name=name, **kwargs: (
                                parses[_name].append(source), _parse(source, *args, **kwargs))[1])
    context = edits.Context('m.py')
    staged = pipeline.port_file(code, context)
    names = [stage.stage for stage in staged]
    assert names[:2] == ['python 2', 'indentation'] and 'names' in names, names
    after_text_stages = staged[1].code
    assert parses['libcst'].count(after_text_stages) == 1
    python_2_output = staged[0].code
    assert parses['ast'].count(python_2_output) == 1


def test_each_pass_pattern_finds_its_lines_and_bindings_alternative_by_alternative():
    """`TreeFacts.matched_lines` searches a pattern alternative by alternative and
    `names_bound_where` the whole code once: on real code, for every pattern of every pass,
    they find every line and name the pattern's own search of the whole code (of each
    binding statement's lines) finds. (An alternative whose matches overlap one another
    across lines, or an anchor, could lose some: no pass has one.)"""
    import ast as python_ast
    searched = {pattern for stage in pipeline.STAGES for name in ('TRIGGER', 'STATEMENTS',
                                                                  'BINDINGS')
                for pattern in [getattr(stage, name, None)] if pattern is not None}
    assert len(searched) >= 30
    for code in _sources()[:40]:
        try:
            tree = python_ast.parse(code)
        except SyntaxError:
            continue
        facts = TreeFacts(cst.Module([]), code, tree)
        lines = [line + '\n' for line in code.split('\n')]
        bindings = [(''.join(lines[node.lineno - 1:node.end_lineno]), set(bound_by(node)))
                    for node in every_statement(tree.body)
                    if isinstance(node, _BINDING_STATEMENTS)]
        for pattern in searched:
            whole = MatchedLines.matching(code, pattern).lines
            assert set(whole) <= set(facts.matched_lines(pattern).lines), pattern.pattern[:60]
            bound = {name for text, names in bindings if pattern.search(text) for name in names}
            assert bound <= facts.names_bound_where(pattern), pattern.pattern[:60]


def test_after_a_libcst_pass_a_trigger_reads_python_s_tree_of_its_code():
    """A trigger that reads Python's tree (division: a `/` that divides) reads the tree of the
    code the last LibCST pass left: a Python 2 file whose only `/` is in a comment runs no
    division pass after the names pass changed it, and one with a real division does."""
    code = 'import tensorflow as tf\nslim = tf.contrib.slim\nx = slim.flatten  # a/b\nprint "x"\n'
    names = [stage.stage for stage in pipeline.port_file(code, edits.Context('m.py'))]
    assert names[0] == 'python 2' and 'names' in names and 'division' not in names, names
    divides = code.replace('# a/b', '\ny = len(x) / 2')
    staged = pipeline.port_file(divides, edits.Context('m.py'))
    assert 'division' in [stage.stage for stage in staged]
    assert 'len(x) // 2' in staged[-1].code


def _counting_python_parses(monkeypatch):
    parsed = []
    parse = pipeline.ast.parse
    monkeypatch.setattr(pipeline.ast, 'parse', lambda source, *args, **kwargs: (
        parsed.append(source), parse(source, *args, **kwargs))[1])
    return parsed


def test_python_s_tree_after_a_pass_is_spliced_as_python_parses_it(monkeypatch):
    """After a LibCST pass, Python's tree of the code it left keeps the old tree's statements
    the pass left where they were and parses the lines between (`facts.spliced_tree`): for
    every pass over the corpus, node for node, line and column, the tree Python parses of the
    whole code; none where a run between does not parse alone, or with Barry's `<>`."""
    import ast as python_ast
    spliced_tree, compared = facts.spliced_tree, []

    def checked(old_tree, old_code, code):
        tree = spliced_tree(old_tree, old_code, code)
        if tree is not None:
            assert python_ast.dump(tree, include_attributes=True) == python_ast.dump(
                python_ast.parse(code), include_attributes=True), code[:200]
            compared.append(tree)
        return tree

    monkeypatch.setattr(facts, 'spliced_tree', checked)
    pipeline.port_sources(_corpus(), tf_upgrade=None)
    assert len(compared) >= 10
    old = 'x = 1\n\n\ndef f(a):\n    return a / 2\n\n\ny = (1,\n     2)\n'
    new = old.replace('a / 2', '"""\n    still a string')  # a run left open: parsed whole
    assert spliced_tree(python_ast.parse(old), old, new) is None
    assert spliced_tree(python_ast.parse(old), old, '# moved\n' + old) is None  # none kept
    barry = 'from __future__ import barry_as_FLUFL\n' + old
    assert spliced_tree(python_ast.parse(barry), barry, barry.replace('a / 2', 'a')) is None
    old_tree = python_ast.parse(old)
    kept = spliced_tree(old_tree, old, old.replace('a / 2', 'a // 2'))
    assert kept is not None and kept.body[0] is old_tree.body[0]  # `x = 1`, `y = ...`: kept
    assert kept.body[2] is old_tree.body[2] and kept.body[1] is not old_tree.body[1]


def test_the_tree_read_for_python_2_evidence_serves_the_stages(monkeypatch):
    """Every file is parsed before the stages (is it Python 2?). That tree serves the stages
    when they get the same text: a Python 3 file, and one the Python 2 stage runs on through
    its importer and leaves as it is, are parsed by Python once. Beyond `KEPT_TREE_LINES` the
    trees are not kept: each is parsed again, to the same result."""
    sources = {'train.py': 'import tensorflow as tf\nimport model\nprint "step"\n',
               'model.py': 'import tensorflow as tf\nslim = tf.contrib.slim\n\n\n'
                           'def net(x):\n    return slim.flatten(x)\n',
               'plain.py': 'import tensorflow as tf\nx = tf.contrib.slim.flatten\n'}
    parsed = _counting_python_parses(monkeypatch)
    kept = pipeline.port_sources(dict(sources), tf_upgrade=None)
    notes = kept[0]['model.py'][1]
    assert any('Python 2 code' in note.message for note in notes), notes  # by its importer
    assert parsed.count(sources['model.py']) == 1 and parsed.count(sources['plain.py']) == 1
    parsed.clear()
    monkeypatch.setattr(pipeline, 'KEPT_TREE_LINES', 0)
    assert pipeline.port_sources(dict(sources), tf_upgrade=None) == kept
    assert parsed.count(sources['model.py']) == 2 and parsed.count(sources['plain.py']) == 2


def test_what_is_alive_when_a_port_starts_is_frozen_until_it_ends(monkeypatch):
    """The objects alive when a port starts are out of the cycle collector's sight while it
    runs (`gc.freeze`), and back after; a caller's own freeze is left as it was."""
    frozen_while_porting = []
    ported = pipeline._ported

    def watched(code, context):
        frozen_while_porting.append(gc.get_freeze_count())
        return ported(code, context)

    monkeypatch.setattr(pipeline, '_ported', watched)
    assert gc.get_freeze_count() == 0
    alive = len(gc.get_objects())
    pipeline.port_sources({'a.py': 'import tensorflow as tf\nx = tf.contrib.slim\n'},
                          tf_upgrade=None)
    assert frozen_while_porting[0] >= 0.5 * alive and gc.get_freeze_count() == 0
    gc.freeze()
    try:
        by_caller = gc.get_freeze_count()
        pipeline.port_sources({'b.py': 'x = 1\n'}, tf_upgrade=None)
        # Not frozen again, nor thawed (a frozen object that dies leaves the count).
        assert 0.9 * by_caller <= gc.get_freeze_count() <= frozen_while_porting[1] <= by_caller
    finally:
        gc.unfreeze()
