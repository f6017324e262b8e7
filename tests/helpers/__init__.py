"""What several test modules share and no test module owns: a test module imports from here or
from the harnesses (conftest, nvim_harness, plugin_harness), never from another test module."""
