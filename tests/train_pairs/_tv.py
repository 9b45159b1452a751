"""torchvision for the torch vision spec of this folder: tests/vision_pairs/_tv.py, loaded by
path (it imports torchvision from <repo>/.vision-site; see that file)."""
import importlib.util
from pathlib import Path

_PATH = Path(__file__).resolve().parents[1] / "vision_pairs" / "_tv.py"
_spec = importlib.util.spec_from_file_location("_vision_pairs_tv", _PATH)
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)
torchvision = _mod.torchvision
