"""ReFrame building blocks (unregistered base classes and fixtures), as hpctestlib does.

Only ReFrame test files import this; the rest of the package does not need ReFrame.
"""
