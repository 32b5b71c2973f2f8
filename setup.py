"""Maps the top-level folders onto the ``kyma`` import package.

The product layout keeps ``engine/``, ``ingest/`` and ``connectors/`` at the top of the
repository; they install as ``kyma.engine``, ``kyma.ingest`` and ``kyma.connectors``.
The engine catalog's migrations in ``sql/`` ship as package data of ``kyma.migrations``;
each store's, in an ``sql/`` folder of its package, as that package's data.
The compiled helpers in ``engine/native/*.pyx`` are built with Cython by the install
(``pip install -e .`` builds them in place; ``python setup.py build_ext --inplace`` rebuilds).
"""

from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, find_packages, setup

MAPPED = {"engine": "kyma.engine", "ingest": "kyma.ingest", "connectors": "kyma.connectors"}

packages = find_packages(include=["kyma", "kyma.*"])
package_dir = {"kyma": "kyma", "kyma.migrations": "sql"}
for folder, name in MAPPED.items():
    package_dir[name] = folder
    for sub in find_packages(where=folder):
        packages.append(f"{name}.{sub}")
    packages.append(name)
packages.append("kyma.migrations")

native = [
    Extension(f"kyma.engine.native.{source.stem}", [str(source)], extra_compile_args=["-O3"])
    for source in sorted(Path("engine/native").glob("*.pyx"))
]

setup(
    packages=packages,
    ext_modules=cythonize(native, language_level=3, quiet=True),
    package_dir=package_dir,
    # Stores keep their migrations in an ``sql/`` folder beside their code.
    package_data={
        "kyma.migrations": ["*.sql"],
        "": ["sql/*.sql"],
        # the web console's built bundle (console/ builds it; committed, so no npm to run)
        "kyma.console": ["static/*"],
    },
)
