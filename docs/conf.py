"""Sphinx configuration: ``make docs`` builds the site into docs/_build/html, warnings as errors."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'src'))

project = 'placement'
author = 'the placement maintainers'
extensions = ['myst_parser', 'sphinx.ext.autodoc', 'sphinx.ext.graphviz', 'sphinxarg.ext']
source_suffix = {'.rst': 'restructuredtext', '.md': 'markdown'}
exclude_patterns = ['_build']
html_theme = 'alabaster'
html_theme_options = {'description': 'thread and memory placement regression tests',
                      'fixed_sidebar': True}
myst_heading_anchors = 3
autodoc_member_order = 'bysource'
graphviz_output_format = 'svg'
# the ReFrame test classes are documented from their ``#:`` comments; ReFrame itself is
# imported (the venv's) so that the builtins they use resolve
nitpicky = False
