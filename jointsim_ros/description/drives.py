"""
Drive configuration: DC motors with gears, from electrical or datasheet values.

Config section ``drives: {JOINT: {...}}``.  A drive is given either by its electrical values
(``resistance``, ``inductance``, ``torque_constant``, optional ``back_emf_constant``) or by
datasheet values (``nominal_voltage``, ``stall_torque``, ``no_load_speed``,
``electrical_time_constant``), plus ``rotor_inertia`` and the transmission (``gear_ratio``, or
``lead`` for a prismatic joint; URDF ``<transmission>`` mechanicalReduction when neither is
given).  All values are motor-side and SI.

Datasheet conversion (ideal motor, friction neglected as datasheets do):
    Kt = Ke = nominal_voltage / no_load_speed          (N m/A = V s/rad)
    R = nominal_voltage / stall_current = nominal_voltage Kt / stall_torque
    L = electrical_time_constant R
and the supply voltage defaults to the nominal voltage.
"""
import difflib
import math

from .model import DriveModel
from ..errors import ConfigError

ELECTRICAL = ('resistance', 'inductance', 'torque_constant')
DATASHEET = ('nominal_voltage', 'stall_torque', 'no_load_speed', 'electrical_time_constant')

#: key -> (minimum, strictly above the minimum, unit, meaning).  The schema of one drive.
DRIVE_KEYS = {
    'resistance': (0.0, True, 'ohm', 'armature resistance R'),
    'inductance': (0.0, False, 'H', 'armature inductance L'),
    'torque_constant': (0.0, True, 'N m/A', 'motor torque per ampere Kt'),
    'back_emf_constant': (0.0, True, 'V s/rad', 'back-EMF per rotor rad/s Ke (default Kt)'),
    'rotor_inertia': (0.0, True, 'kg m^2', 'rotor inertia J_m about its axis'),
    'gear_ratio': (0.0, True, '1 (rad/rad, or rad/m on a prismatic joint)',
                   'rotor speed / joint speed N (default: URDF transmission, else 1)'),
    'lead': (0.0, True, 'm/rad', 'prismatic joints: travel per rotor radian (gear_ratio = '
             '1/lead)'),
    'viscous_friction': (0.0, False, 'N m s/rad', 'motor viscous friction b_m (default 0)'),
    'efficiency': (0.0, True, '1, at most 1', 'gear efficiency (default 1)'),
    'supply_voltage': (0.0, True, 'V', 'commands are clipped to +-this (default: nominal '
                       'voltage, else unlimited)'),
    'current_limit': (0.0, True, 'A', "driver's current limit (default: none)"),
    'nominal_voltage': (0.0, True, 'V', 'datasheet: nominal voltage'),
    'stall_torque': (0.0, True, 'N m', 'datasheet: stall torque at the nominal voltage'),
    'no_load_speed': (0.0, True, 'rad/s', 'datasheet: no-load speed at the nominal voltage'),
    'electrical_time_constant': (0.0, False, 's', 'datasheet: L/R'),
    # servo modes (jointsim_ros/servo.py, docs/drives.md): loop bandwidths and gain overrides
    'current_bandwidth': (0.0, True, 'rad/s', 'servo current loop bandwidth (default 2000)'),
    'velocity_bandwidth': (0.0, True, 'rad/s', 'servo velocity loop crossover (default 100)'),
    'position_bandwidth': (0.0, True, 'rad/s', 'servo position loop crossover (default 10)'),
    'load_inertia': (0.0, True, 'kg m^2 (kg on a prismatic joint)',
                     'joint-side inertia the velocity loop is tuned for (default: what the '
                     'joint carries at the initial pose)'),
    'current_kp': (0.0, False, 'V/A', 'current loop proportional gain (default from the '
                   'bandwidth)'),
    'current_ki': (0.0, False, 'V/(A s)', 'current loop integral gain (default from the '
                   'bandwidth)'),
    'velocity_kp': (0.0, False, 'A s/rad, rotor side', 'velocity loop proportional gain '
                    '(default from the bandwidth)'),
    'velocity_ki': (0.0, False, 'A/rad, rotor side', 'velocity loop integral gain (default '
                    'from the bandwidth)'),
    'position_kp': (0.0, False, '1/s', 'position loop gain (default: position_bandwidth)'),
}
SERVO_KEYS = ('current_bandwidth', 'velocity_bandwidth', 'position_bandwidth', 'load_inertia',
              'current_kp', 'current_ki', 'velocity_kp', 'velocity_ki', 'position_kp')


def check_drives(value, context):
    """
    Validate the ``drives`` section: joint name -> mapping of DRIVE_KEYS numbers.

    Args:
        value: the section as read from YAML or a dict.
        context: config context (source and key path) for messages.

    Returns:
        dict joint name -> dict key -> float.
    """
    if value is None:
        return {}
    if not isinstance(value, dict):
        context.fail('a mapping joint name -> drive parameters', value)
    out = {}
    for joint, params in value.items():
        where = context.child(joint)
        if not isinstance(params, dict):
            where.fail('a mapping of drive parameters (' + ', '.join(DRIVE_KEYS) + ')', params)
        checked = {}
        for key, number in params.items():
            if key not in DRIVE_KEYS:
                hint = difflib.get_close_matches(str(key), DRIVE_KEYS, n=1, cutoff=0.6)
                raise ConfigError(
                    f"{context.source}: unknown key '{key}' in {where.path}"
                    + (f"; did you mean '{hint[0]}'?" if hint else '.')
                    + f"  Drive keys: {', '.join(DRIVE_KEYS)}.")
            minimum, strict, unit, _ = DRIVE_KEYS[key]
            ok = (isinstance(number, (int, float)) and not isinstance(number, bool)
                  and math.isfinite(number)
                  and (number > minimum if strict else number >= minimum))
            if key == 'efficiency' and ok:
                ok = number <= 1.0
            if not ok:
                where.child(key).fail(
                    f"a finite number {'>' if strict else '>='} {minimum:g}"
                    + (' and <= 1' if key == 'efficiency' else '') + f' ({unit})', number)
            checked[key] = float(number)
        out[str(joint)] = checked
    return out


def build_drive(joint, params, source, transmission_ratio=None):
    """
    Turn one joint's checked drive parameters into a DriveModel.

    Args:
        joint: JointModel the drive acts on (revolute, continuous or prismatic).
        params: dict from ``check_drives``.
        source: config source for messages.
        transmission_ratio: URDF <transmission> mechanicalReduction of the joint, or None.

    Returns:
        DriveModel.

    Raises:
        ConfigError: incomplete or mixed parameter sets, a lead on a rotary joint.
    """
    name = f'{source}: drives.{joint.name}'
    has_electrical = any(k in params for k in ELECTRICAL + ('back_emf_constant',))
    has_datasheet = any(k in params for k in DATASHEET)
    if has_electrical and has_datasheet:
        raise ConfigError(f'{name} mixes electrical values ({", ".join(ELECTRICAL)}) with '
                          f'datasheet values ({", ".join(DATASHEET)}); give one set.')
    needed = DATASHEET if has_datasheet else ELECTRICAL
    missing = [k for k in needed + ('rotor_inertia',) if k not in params]
    if missing:
        raise ConfigError(f'{name} lacks {", ".join(missing)} (a drive needs '
                          f'{", ".join(ELECTRICAL)} and rotor_inertia, or the datasheet values '
                          f'{", ".join(DATASHEET)} and rotor_inertia).')
    if has_datasheet:
        kt = ke = params['nominal_voltage'] / params['no_load_speed']
        resistance = params['nominal_voltage'] * kt / params['stall_torque']
        inductance = params['electrical_time_constant'] * resistance
        supply = params.get('supply_voltage', params['nominal_voltage'])
    else:
        kt = params['torque_constant']
        ke = params.get('back_emf_constant', kt)
        resistance = params['resistance']
        inductance = params['inductance']
        supply = params.get('supply_voltage', math.inf)
    if 'lead' in params:
        if joint.type != 'prismatic':
            raise ConfigError(f'{name}: lead (m/rad) is for prismatic joints; joint '
                              f"'{joint.name}' is {joint.type}: give gear_ratio instead.")
        if 'gear_ratio' in params:
            raise ConfigError(f'{name}: give gear_ratio or lead, not both.')
        gear = 1.0 / params['lead']
    else:
        gear = params.get('gear_ratio', transmission_ratio or 1.0)
    return DriveModel(
        joint=joint.name, resistance=resistance, inductance=inductance, torque_constant=kt,
        back_emf_constant=ke, rotor_inertia=params['rotor_inertia'], gear_ratio=gear,
        viscous_friction=params.get('viscous_friction', 0.0),
        efficiency=params.get('efficiency', 1.0), supply_voltage=supply,
        current_limit=params.get('current_limit', math.inf),
        servo={k: params[k] for k in SERVO_KEYS if k in params})
