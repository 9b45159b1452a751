"""Spec breaking the contract: inputs() but no model()."""


def inputs():
    return ()
