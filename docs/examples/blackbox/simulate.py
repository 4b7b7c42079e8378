"""A small simulation to optimise as a black box: PID control of a mass on a spring.

    python simulate.py KP KI KD        # prints the cost of these gains, one number

A 1 kg mass on a spring (k = 4 N/m) with a little damping (c = 0.2 N s/m) starts at rest
at 0 and must follow a unit step set point. A PID controller pushes it with force
u = KP e + KI integral(e) + KD de/dt (e = set point - position), saturated at +-20 N.
Euler steps of 1 ms over 5 s; the cost is the integral of time-weighted absolute error
(ITAE) plus a small penalty on control effort. A program in its own right, run as a
subprocess: what an optimiser sees of a simulation written in any language.
"""

import sys


def cost(kp: float, ki: float, kd: float, dt: float = 1e-3, horizon: float = 5.0) -> float:
    x = v = integral = 0.0
    previous = 1.0  # the error at t = 0
    itae = effort = 0.0
    t = 0.0
    for _ in range(int(horizon / dt)):
        e = 1.0 - x
        integral += e * dt
        u = kp * e + ki * integral + kd * (e - previous) / dt
        u = max(-20.0, min(20.0, u))
        a = u - 4.0 * x - 0.2 * v  # m = 1 kg
        v += a * dt
        x += v * dt
        previous = e
        t += dt
        itae += t * abs(e) * dt
        effort += u * u * dt
    return itae + 1e-4 * effort


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: python simulate.py KP KI KD")
    print(repr(cost(*map(float, sys.argv[1:]))))
