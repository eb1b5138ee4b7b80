"""collections.Iterable and kin moved to collections.abc
(slimdata.port.py3.collections_abc), ported and run."""


from port_snippets import port, run


def test_collections_abstract_classes_move_to_collections_abc():
    code, _ = port('import collections\nfrom collections import Iterable, OrderedDict\n'
                    'a = collections.Mapping\nb = Iterable\nc = OrderedDict\n')
    namespace = run(code)
    import collections.abc
    assert namespace['a'] is collections.abc.Mapping
    assert namespace['b'] is collections.abc.Iterable
    assert namespace['c'] is collections.OrderedDict
