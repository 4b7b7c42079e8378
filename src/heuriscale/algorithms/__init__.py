"""How a problem is optimised: one file per algorithm, pure state -> state steps."""

from .apo import APO
from .base import Algorithm, Kernels, State
from .cmaes import CMAES
from .de import DE
from .fep import FEP
from .firefly import Firefly
from .jade import JADE
from .jso import JSO
from .lshade import LSHADE
from .moead import MOEAD
from .nsga2 import NSGA2
from .prs import PRS
from .pso import PSO
from .registry import algorithm_class, algorithm_names, get_algorithm, register_algorithm

__all__ = [
    "Algorithm",
    "State",
    "Kernels",
    "DE",
    "CMAES",
    "PSO",
    "APO",
    "PRS",
    "FEP",
    "Firefly",
    "JADE",
    "LSHADE",
    "JSO",
    "NSGA2",
    "MOEAD",
    "get_algorithm",
    "register_algorithm",
    "algorithm_names",
    "algorithm_class",
]
