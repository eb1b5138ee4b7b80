"""scipy.misc's moved names imported from their modules, the removed ones reported
(slimdata.port.py3.scipy_misc). SciPy is not installed here: the expectations are SciPy's own
deprecation messages (docs.scipy.org, scipy.misc 1.2: "Importing logsumexp from scipy.misc is
deprecated ... use scipy.special")."""

import numpy as np
import PIL.Image  # the advice names PIL.Image: the submodule is loaded

from port_snippets import kinds, port
from slimdata.port import edits
from slimdata.port.py3 import scipy_misc


def test_removed_image_functions_are_reported_where_imported_and_used():
    source = ('from scipy.misc import imread, imresize\n'
              'import scipy.misc\n'
              'from scipy import misc\n\n\n'
              'def load(path):\n'
              '    image = imresize(imread(path), (224, 224))\n'
              "    scipy.misc.imsave('out.png', image)\n"
              '    return misc.toimage(image)\n')
    code, notes = port(source)
    assert code == source
    reported = [(note.line, note.message.split(':')[0]) for note in kinds(notes,
                                                                           edits.NOT_PORTED)]
    assert reported == [(1, 'scipy.misc.imread'), (1, 'scipy.misc.imresize'),
                        (8, 'scipy.misc.imsave'), (9, 'scipy.misc.toimage')]
    assert 'PIL.Image.fromarray(array).resize((width, height)' in notes[1].message


def test_moved_names_are_imported_from_their_module():
    code, notes = port('from scipy.misc import logsumexp, comb\nx = logsumexp([0.0])\n')
    assert code == 'from scipy.special import logsumexp, comb\nx = logsumexp([0.0])\n'
    [note] = notes
    assert note.kind == edits.CHANGED and note.line == 1
    mixed = 'from scipy.misc import face, imread\n'
    code, notes = port(mixed)
    assert code == mixed
    assert [note.message.split(':')[0] for note in notes] == ['scipy.misc.face',
                                                              'scipy.misc.imread']
    assert 'scipy.datasets.face' in notes[0].message


def test_a_misc_that_is_not_scipys_is_left_alone():
    source = ('import misc\n\n\n'
              'class Reader:\n'
              '    def read(self, path):\n'
              '        return misc.imread(path), self.misc.imresize(path)\n')
    assert port(source) == (source, [])


def test_the_advice_for_imresize_gives_an_image_of_height_by_width():
    """The replacement the report names, run: (width, height) to Pillow, an array of
    (height, width) back, the values bilinear blends of the source's."""
    array = np.arange(12, dtype=np.uint8).reshape(3, 4) * 20
    advice = scipy_misc.REMOVED['imresize'].split(')),')[0] + '))'
    resized = eval(advice, {'numpy': np, 'PIL': PIL, 'array': array,  # noqa: S307
                            'width': 8, 'height': 6})
    assert resized.shape == (6, 8) and resized.dtype == np.uint8
    assert resized.min() >= array.min() and resized.max() <= array.max()
