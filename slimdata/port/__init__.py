"""`slimdata port`: ports a repository of old TF-Slim / TF1 code to slimdata and TensorFlow 2.

One command does what the porting guide lists, mechanically, in passes over each file's
concrete syntax tree (LibCST), so comments and formatting survive:

- `python2`: on files written for Python 2, 2to3's fixers (on `fissix`) first;
- `names`: data imports to slimdata; `tf.contrib.*` names to their successors (the table in
  `rules`; tf_slim, public TensorFlow, `slimdata.contrib`); private `tensorflow.python` calls
  to their public names; `tf.layers.*` calls to tf_slim layers;
- `py3`: Python 3 and numpy 2 breakages where the fix is certain (reported where it is not),
  one pass per fix;
- `variables`: checks of a variable's op type also accept `VarHandleOp` (resource variables);
- `entry`: TF1 behaviour where a TF1 script starts (`disable_v2_behavior()`, resource
  variables, Keras 2 as `tf.keras` when tf-keras is installed);
- then TensorFlow's own `tf_upgrade_v2` for the TF1 calls (`upgrade_v2`), whose imports that do
  not resolve are put back (`imports`).

Every pass sees TensorFlow under one name whatever the file's spelling (`spelling`).
`pipeline` runs the stages over each file (each pass where its trigger finds work);
`tree.port_tree` runs the pipeline over a folder, writes the result whole or not at all (a
copy built aside and renamed, or in place with a backup and a marker the same command resumes
from), and returns the report (`report.PortReport`); `lines` carries line numbers through the
edits and keeps each line's ending.
"""
