"""`slimdata port`: ports a repository of old TF-Slim / TF1 code to slimdata and TensorFlow 2.

One command does what the porting guide lists, mechanically, in passes over each file's
concrete syntax tree (LibCST), so comments and formatting survive:

- `names`: data imports to slimdata; `tf.contrib.slim` / `contrib.framework` /
  `contrib.layers` names to tf_slim's (the table in `rules`); private `tensorflow.python` calls
  to their public names; `tf.layers.*` calls to tf_slim layers;
- `py3`: Python 3 breakages where the fix is certain (reported where it is not);
- `entry`: `tf.compat.v1.disable_eager_execution()` where a TF1 script starts;
- then TensorFlow's own `tf_upgrade_v2` for the TF1 calls (`upgrade_v2`).

`tree.port_tree` runs them over a folder, writes the result whole or not at all (a copy built
aside and renamed, or in place with a backup and a marker the same command resumes from), and
returns the report (`report.PortReport`); `lines` carries line numbers through the edits and
keeps each line's ending.
"""
