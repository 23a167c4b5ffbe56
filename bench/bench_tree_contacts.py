"""
Tree formulation with contacts (docs/tree.md): the drop set at rest and landing, against MuJoCo.

Both jointsim formulations (maximal and tree) and MuJoCo, in the same run.

The drop set of bench_compliant.py (part 4, "the drop set at rest against MuJoCo"): G1, Talos,
Solo12, A1, Bolt and Go2 from the example-robot-data wheel, each loaded unmodified with a
floating base, its lowest link frame 0.3 m above the ground, defaults on both sides:

- jointsim maximal: bench_compliant's config (``base: floating``), everything else the defaults;
- jointsim tree: the same config with ``solver: {formulation: tree}`` laid over it;
- MuJoCo: its own URDF import (bench_compliant.drop_mujoco: convex hulls of the collision
  meshes, a free joint on the root, a ground plane, timestep 1 ms, 20 iterations).

At rest: each engine falls, lands and settles for ``--settle`` s (default 2; the same for every
engine: a robot still moving at 2 s, as G1 whose light joints settle for several seconds, is
measured at rest with a longer one), then STEPS steps are timed per engine
(``step(1)`` / ``mj_step`` in a loop, the mean per step of a run); the engines alternate run by
run and the median over ``--runs`` runs is reported (smallest and largest run in the CSV).  The
tree's engine is also timed alone (``tree engine``: its ``step(1)`` without the simulator's
sensor samples and report, as ``mj_step`` is: a URDF's IMUs and cameras, which the simulator
samples at their rates and MuJoCo's URDF import leaves out; ``sensors sampled`` names them).  After
the timing, each formulation's state at rest: the last step's StepReport (iterations, residual,
stop reason), the contact points that carried load (``Simulator.contacts()``) and their total
normal force over the robot's weight m g, the largest joint-anchor error
(``Simulator.joint_anchor_errors()``, m), and whether it landed (every step finite and the
base above the ground).

The landing: a fresh drop in each formulation per run (loaded, one untimed step for the
compilation caches), then the next 0.5 s (500 steps: the fall and the impact) timed one
``step(1)`` call each; the mean per step of a run, median over the runs.

A formulation that refuses a robot at load (a ConfigError, or any JointsimError) or diverges
is reported in one line and in the row's note; the other engines and robots go on.  The
simulator's log is kept to errors (a dropped robot's joints exceed their URDF velocity limits,
a warning each).

``--damping D``: every joint gets viscous damping D (N m s/rad or N s/m) in every engine
(jointsim ``joints.NAME.damping``, MuJoCo ``dof_damping``), in place of the URDF's.  A robot
whose URDF gives none, as Talos, need not come to rest at all: a limb that hangs free after
the drop swings on as an undamped pendulum, and "at rest" is then a moving robot.

Run: .venv/bin/python bench/bench_tree_contacts.py [--runs 3] [--steps 1000] [--quick]
     [--robots G1,Solo12,...] [--settle 2] [--damping 0]
Writes tree_contacts.csv and tree_contacts.md in bench/results/ (or --out).
"""
import logging
import time

from bench_compliant import drop_jointsim, drop_mujoco, drop_start, mujoco, MUJOCO_DROP_SET
from bench_drop import ROBOTS_DIR
from benchlib import (markdown_table, parse_args, pin_to_one_core, quiet_c_output, save_markdown,
                      spread, time_calls, write_csv)
from jointsim_ros.errors import DivergenceError, JointsimError
import numpy as np

#: The two formulations: config keys laid over bench_compliant's drop config.
FORMULATIONS = {'maximal': {}, 'tree': {'solver': {'formulation': 'tree'}}}
#: Simulated time of the landing measurement, s (1 ms steps).
LANDING_STEPS = 500
#: Robots of a --quick run without --robots.
QUICK_ROBOTS = 2
G = 9.81
#: Columns of the markdown table (the CSV has every column).
SHOWN = ['robot', 'maximal us/step', 'tree us/step', 'MuJoCo us/step', 'tree / MuJoCo',
         'tree engine us/step', 'tree engine / MuJoCo', 'sensors sampled',
         'tree iterations at rest', 'tree residual at rest', 'tree converged steps at rest',
         'contact points max/tree/MuJoCo',
         'anchor error maximal m', 'anchor error tree m', 'load / m g max/tree (last step)',
         'landed max/tree', 'landing maximal us/step', 'landing tree us/step']


def robots_option(parser):
    """Add --robots to the benchmark options."""
    parser.add_argument('--robots', default=None,
                        help='comma-separated robots of the drop set (first word of the name, '
                             f'any case): {", ".join(MUJOCO_DROP_SET)} (default: all; --quick: '
                             f'the first {QUICK_ROBOTS})')


def options(parser):
    """Add --robots and --settle to the benchmark options."""
    robots_option(parser)
    parser.add_argument('--settle', type=float, default=2.0,
                        help='simulated seconds each engine settles after the drop before the '
                             'timing at rest, s (default 2)')
    parser.add_argument('--damping', type=float, default=0.0,
                        help='viscous damping of every joint in every engine, N m s/rad or '
                             "N s/m (default 0: the URDF's)")


def chosen_robots(names, quick):
    """
    Return the (name, relative path) items to run.

    Args:
        names: the --robots text, or None.
        quick: --quick (without names: the first QUICK_ROBOTS robots).

    Raises:
        SystemExit: a name not in the drop set.
    """
    items = list(MUJOCO_DROP_SET.items())
    if not names:
        return items[:QUICK_ROBOTS] if quick else items
    chosen = []
    for wanted in (n.strip().lower() for n in names.split(',') if n.strip()):
        match = [(name, path) for name, path in items
                 if wanted in (name.lower(), name.split()[0].lower())]
        if not match:
            raise SystemExit(f'--robots: unknown robot {wanted!r}; the drop set is '
                             f'{", ".join(n.split()[0] for n in MUJOCO_DROP_SET)}.')
        chosen += [m for m in match if m not in chosen]
    return chosen


def one_line(error):
    """Return an error's message on one line."""
    return ' '.join(str(error).split())


def robot_mass(sim):
    """Return the robot's mass (scene objects left out), kg."""
    objects = {item.body for item in sim.model.objects}
    return sum(b.mass for i, b in enumerate(sim.model.bodies) if i not in objects)


def landed(sim):
    """Return whether the base is finite and above the ground."""
    base = sim.link_pose(sim.model.bodies[0].name)[0]
    return bool(np.all(np.isfinite(base)) and base[2] > 0.0)


def rest_facts(sim):
    """Return the state at rest of a settled simulator: report, contacts, anchors, landing."""
    report = sim.last_step
    contacts = sim.contacts()
    base = sim.model.bodies[0].name
    return {'base_speed': float(np.linalg.norm(sim.link_twist(base)[0])),
            'iterations': report.iterations, 'residual': report.residual,
            'stop_reason': report.stop_reason, 'contacts': len(contacts),
            'load': sum(c.normal_force for c in contacts) / (robot_mass(sim) * G),
            'anchor': max(sim.joint_anchor_errors().values(), default=0.0),
            'landed': landed(sim)}


def with_damping(path, extra, damping):
    """Return the config keys extra with every movable joint damped by damping (0: extra)."""
    if damping <= 0.0:
        return extra
    names = drop_start(path, extra).joint_names
    return {**extra, 'joints': {name: {'damping': damping} for name in names}}


def landing_run(path, extra):
    """Return the mean us per step of the first 0.5 s of a fresh drop."""
    sim = drop_start(path, extra)
    sim.step(1)   # compilation and caches, untimed
    return float(np.mean(time_calls(sim.step, LANDING_STEPS)))


def engine_timer(sim, steps):
    """Return a timing function of the engine's own step(1) on sim (us a step)."""
    engine = sim._engine

    def run():
        start = time.perf_counter()
        for _ in range(steps):
            engine.step(1)
        return (time.perf_counter() - start) / steps * 1e6
    return run


def sensor_names(sim):
    """Return the sensors the simulator samples as it steps (the URDF's and the config's)."""
    sensing = sim.sensors
    return list(sensing.names) + list(sensing.imu_names) + list(sensing.range_names)


def robot_row(name, relative, runs, steps, settle=2.0, damping=0.0):
    """Measure one robot in the three engines; return its table row."""
    path = ROBOTS_DIR / relative
    configs = {}    # formulation -> its config keys (with --damping)
    notes = []
    timers = {}     # engine -> timing function at rest
    sims = {}
    solved = {}     # formulation -> facts of its timed steps (the share that converged)
    failed = {}     # formulation -> 'refused' / 'diverged'

    def fail(label, error):
        what = 'diverged' if isinstance(error, DivergenceError) else 'refused'
        failed[label] = what
        timers.pop(label, None)
        print(f'{name}: {label} {what}: {one_line(error)}', flush=True)
        notes.append(f'{label} {what}: {one_line(error)}')

    for label, extra in FORMULATIONS.items():
        try:
            configs[label] = with_damping(path, extra, damping)
            timers[label], solved[label], sims[label] = drop_jointsim(path, steps,
                                                                      configs[label], settle)
        except JointsimError as error:
            fail(label, error)
    if 'tree' in sims:
        # the engine's step alone, as mj_step is: without the simulator's sensor samples and
        # report (a URDF's IMUs and cameras, which MuJoCo's import leaves out)
        timers['tree engine'] = engine_timer(sims['tree'], steps)
    mujoco_note = 'no MuJoCo'
    if mujoco is not None:
        with quiet_c_output():
            run_m, mujoco_note = drop_mujoco(path, steps, settle, damping)
        if run_m is not None:
            timers['MuJoCo'] = run_m
        else:
            print(f'{name}: {mujoco_note}', flush=True)
            notes.append(mujoco_note)

    rest = {label: [] for label in timers}
    landing = {label: [] for label in FORMULATIONS if label not in failed}
    for _ in range(runs):   # the engines alternate run by run
        for label in list(timers):
            try:
                rest[label].append(timers[label]())
            except JointsimError as error:
                fail(label, error)
        for label in list(landing):
            if label in failed:
                continue
            try:
                landing[label].append(landing_run(path, configs[label]))
            except JointsimError as error:
                fail(label, error)
    facts = {label: rest_facts(sims[label]) for label in FORMULATIONS if label not in failed}

    def median(label, table):
        values = table.get(label) if label not in failed else None
        return spread(values) if values else (float('nan'),) * 3

    def cell(label, value, digits=1):
        if label in failed:
            return failed[label]
        return round(value, digits) if value == value else ''

    row = {'robot': name, 'joints': len(sims[next(iter(sims))].joint_names) if sims else ''}
    timed = {label: median(label, rest) for label in ('maximal', 'tree', 'MuJoCo')}
    engine_only = median('tree engine', rest)[0] if 'tree' not in failed else float('nan')
    for label, (mid, low, high) in timed.items():
        row[f'{label} us/step'] = cell(label, mid)
        row[f'{label} min-max'] = f'{low:.0f}-{high:.0f}' if mid == mid else ''
    tree, peer, maximal = timed['tree'][0], timed['MuJoCo'][0], timed['maximal'][0]
    row['tree / MuJoCo'] = round(tree / peer, 2) if tree == tree and peer == peer else ''
    row['tree / maximal'] = round(tree / maximal, 2) if tree == tree and maximal == maximal else ''
    row['tree engine us/step'] = cell('tree', engine_only)
    row['tree engine / MuJoCo'] = (round(engine_only / peer, 2)
                                   if engine_only == engine_only and peer == peer else '')
    row['sensors sampled'] = (', '.join(sensor_names(sims['tree'])) or 'none'
                              if 'tree' in sims else '')

    def fact(label, key, form=lambda v: v):
        return form(facts[label][key]) if label in facts else failed.get(label, '')

    for label in FORMULATIONS:
        row[f'{label} iterations at rest'] = fact(label, 'iterations')
        row[f'{label} residual at rest'] = fact(label, 'residual')
        row[f'{label} stop reason'] = fact(label, 'stop_reason')
        row[f'{label} converged steps at rest'] = (
            round(solved[label].get('converged', float('nan')), 3) if label in solved
            and label not in failed else failed.get(label, ''))
    points = [fact('maximal', 'contacts'), fact('tree', 'contacts'),
              mujoco_note.split()[0] if mujoco_note.endswith(' contacts') else 'n/a']
    row['contact points max/tree/MuJoCo'] = '/'.join(str(p) for p in points)
    for label in FORMULATIONS:
        row[f'anchor error {label} m'] = fact(label, 'anchor')
    for label in FORMULATIONS:
        row[f'base speed at rest {label} m/s'] = fact(label, 'base_speed')
    row['load / m g max/tree (last step)'] = '/'.join(
        str(fact(label, 'load', lambda v: round(v, 3))) for label in FORMULATIONS)
    row['landed max/tree'] = '/'.join(
        str(fact(label, 'landed', lambda v: 'yes' if v else 'no')) for label in FORMULATIONS)
    for label in FORMULATIONS:
        mid, low, high = median(label, landing)
        row[f'landing {label} us/step'] = cell(label, mid)
        row[f'landing {label} min-max'] = f'{low:.0f}-{high:.0f}' if mid == mid else ''
    row['MuJoCo'] = mujoco_note
    row['note'] = '; '.join(notes)
    return row


def main(argv=None):
    """Measure the chosen robots, print and save the table."""
    args = parse_args(__doc__, 3, 1000, argv, options=options)
    pin_to_one_core(args.cpu)
    logging.getLogger('jointsim_ros').setLevel(logging.ERROR)
    if not ROBOTS_DIR.is_dir():
        save_markdown(args.out, 'tree_contacts',
                      'example-robot-data is not installed: no drop set.')
        return 0
    rows = []
    for name, relative in chosen_robots(args.robots, args.quick):
        row = robot_row(name, relative, args.runs, args.steps, args.settle, args.damping)
        print({k: row[k] for k in SHOWN}, flush=True)
        rows.append(row)
    write_csv(args.out, 'tree_contacts', rows)
    header = (f'### The drop set at rest and landing: tree, maximal and MuJoCo\n\n'
              f'{args.runs} runs x {args.steps} steps at rest (after {args.settle:g} s), '
              + (f'every joint damped {args.damping:g} N m s/rad, ' if args.damping else '')
              + f'{LANDING_STEPS} steps of landing, medians of the runs; '
              f'{"--quick: the figures are noise. " if args.quick else ""}'
              'Every column in tree_contacts.csv.\n')
    notes = [f'- {row["robot"]}: {row["note"]}' for row in rows if row['note']]
    save_markdown(args.out, 'tree_contacts', header + '\n' + markdown_table(rows, SHOWN)
                  + ('\n\n' + '\n'.join(notes) if notes else ''))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
