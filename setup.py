"""Build hook for the optional C kernels; all metadata lives in pyproject.toml.

``optional=True``: where no compiler is available the install still succeeds and
padiff_trace falls back to its numpy implementation (slower, same results).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "padiff_trace.arrays._ckernel",
            ["padiff_trace/arrays/_ckernel.c"],
            extra_compile_args=["-O3"],
            optional=True,
        )
    ]
)
