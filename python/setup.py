"""`pip install ./python` against a built tree: the package plus the tree's libvoxlabel.so, copied next to
the package's modules (where voxlabel/_lib.py looks first). The tree is ../build, or $VOXLABEL_BUILD."""
import os
import shutil

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

here = os.path.dirname(os.path.abspath(__file__))


class build_py_with_library(build_py):
    def run(self):
        super().run()
        build = os.environ.get("VOXLABEL_BUILD", os.path.join(here, "..", "build"))
        library = os.path.realpath(os.path.join(build, "libvoxlabel.so"))
        if not os.path.isfile(library):
            raise SystemExit("voxlabel: %s not found; build the library first (make python, or cmake --build "
                             "BUILD --target voxlabel_shared) or set VOXLABEL_BUILD" % library)
        shutil.copyfile(library, os.path.join(self.build_lib, "voxlabel", "libvoxlabel.so"))


class BinaryDistribution(Distribution):
    """The wheel carries libvoxlabel.so, so it is tied to the platform."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": build_py_with_library}, distclass=BinaryDistribution)
