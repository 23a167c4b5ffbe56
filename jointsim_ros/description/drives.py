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
from dataclasses import dataclass
import math

from .model import DriveModel
from .schema import keys_of, named_sections, number, setting
from ..errors import ConfigError

ELECTRICAL = ('resistance', 'inductance', 'torque_constant')
DATASHEET = ('nominal_voltage', 'stall_torque', 'no_load_speed', 'electrical_time_constant')


def _positive(maximum=None):
    return number(0.0, strict=True, maximum=maximum, finite_word=True)


def _non_negative():
    return number(0.0, finite_word=True)


@dataclass(frozen=True)
class DriveParameters:
    """
    The keys of one drive (config ``drives: {JOINT: {...}}``), all motor-side and SI.

    A key left out is "not given": the default its doc names is applied in
    :func:`build_drive` (several are derived from other keys or from the URDF).
    """

    resistance: float = setting(None, 'ohm', 'armature resistance R', _positive())
    inductance: float = setting(None, 'H', 'armature inductance L', _non_negative())
    torque_constant: float = setting(None, 'N m/A', 'motor torque per ampere Kt',
                                     _positive())
    back_emf_constant: float = setting(None, 'V s/rad',
                                       'back-EMF per rotor rad/s Ke (default Kt)',
                                       _positive())
    rotor_inertia: float = setting(None, 'kg m^2', 'rotor inertia J_m about its axis',
                                   _positive())
    gear_ratio: float = setting(
        None, '1 (rad/rad, or rad/m on a prismatic joint)',
        'rotor speed / joint speed N (default: URDF transmission, else 1)',
        _positive())
    lead: float = setting(None, 'm/rad',
                          'prismatic joints: travel per rotor radian (gear_ratio = 1/lead)',
                          _positive())
    viscous_friction: float = setting(0.0, 'N m s/rad', 'motor viscous friction b_m (default 0)',
                                      _non_negative())
    efficiency: float = setting(1.0, '1, at most 1', 'gear efficiency (default 1)',
                                _positive(maximum=1.0))
    supply_voltage: float = setting(
        None, 'V', 'commands are clipped to +-this (default: nominal voltage, else unlimited)',
        _positive())
    current_limit: float = setting(math.inf, 'A', "driver's current limit (default: none)",
                                   _positive())
    nominal_voltage: float = setting(None, 'V', 'datasheet: nominal voltage', _positive())
    stall_torque: float = setting(None, 'N m', 'datasheet: stall torque at the nominal voltage',
                                  _positive())
    no_load_speed: float = setting(None, 'rad/s',
                                   'datasheet: no-load speed at the nominal voltage',
                                   _positive())
    electrical_time_constant: float = setting(None, 's', 'datasheet: L/R', _non_negative())
    # servo modes (jointsim_ros/sim/servo.py, docs/drives.md): loop bandwidths and gain overrides
    current_bandwidth: float = setting(None, 'rad/s',
                                       'servo current loop bandwidth (default 2000)',
                                       _positive())
    velocity_bandwidth: float = setting(None, 'rad/s',
                                        'servo velocity loop crossover (default 100)',
                                        _positive())
    position_bandwidth: float = setting(None, 'rad/s',
                                        'servo position loop crossover (default 10)',
                                        _positive())
    load_inertia: float = setting(
        None, 'kg m^2 (kg on a prismatic joint)',
        'joint-side inertia the velocity loop is tuned for (default: what the joint carries '
        'at the initial pose)', _positive())
    current_kp: float = setting(None, 'V/A',
                                'current loop proportional gain (default from the bandwidth)',
                                _non_negative())
    current_ki: float = setting(None, 'V/(A s)',
                                'current loop integral gain (default from the bandwidth)',
                                _non_negative())
    velocity_kp: float = setting(
        None, 'A s/rad, rotor side',
        'velocity loop proportional gain (default from the bandwidth)',
        _non_negative())
    velocity_ki: float = setting(None, 'A/rad, rotor side',
                                 'velocity loop integral gain (default from the bandwidth)',
                                 _non_negative())
    position_kp: float = setting(None, '1/s', 'position loop gain (default: position_bandwidth)',
                                 _non_negative())


#: The schema of one drive, made from :class:`DriveParameters`.
DRIVE_KEYS = keys_of(DriveParameters)
SERVO_KEYS = ('current_bandwidth', 'velocity_bandwidth', 'position_bandwidth', 'load_inertia',
              'current_kp', 'current_ki', 'velocity_kp', 'velocity_ki', 'position_kp')

#: Validate the ``drives`` section: joint name -> DriveParameters.
check_drives = named_sections(
    DriveParameters, 'joint',
    known='Drive keys: ' + ', '.join(k.name for k in DRIVE_KEYS) + '.',
    mapping_text='a mapping joint name -> drive parameters')


def build_drive(joint, params, source, transmission_ratio=None):
    """
    Turn one joint's checked drive parameters into a DriveModel.

    Args:
        joint: JointModel the drive acts on (revolute, continuous or prismatic).
        params: DriveParameters from ``check_drives`` (None: not given).
        source: config source for messages.
        transmission_ratio: URDF <transmission> mechanicalReduction of the joint, or None.

    Returns:
        DriveModel.

    Raises:
        ConfigError: incomplete or mixed parameter sets, a lead on a rotary joint.
    """
    name = f'{source}: drives.{joint.name}'
    given = {k.name for k in DRIVE_KEYS if getattr(params, k.name) is not None}
    has_electrical = any(k in given for k in ELECTRICAL + ('back_emf_constant',))
    has_datasheet = any(k in given for k in DATASHEET)
    if has_electrical and has_datasheet:
        raise ConfigError(f'{name} mixes electrical values ({", ".join(ELECTRICAL)}) with '
                          f'datasheet values ({", ".join(DATASHEET)}); give one set.')
    needed = DATASHEET if has_datasheet else ELECTRICAL
    missing = [k for k in needed + ('rotor_inertia',) if k not in given]
    if missing:
        raise ConfigError(f'{name} lacks {", ".join(missing)} (a drive needs '
                          f'{", ".join(ELECTRICAL)} and rotor_inertia, or the datasheet values '
                          f'{", ".join(DATASHEET)} and rotor_inertia).')
    if has_datasheet:
        kt = ke = params.nominal_voltage / params.no_load_speed
        resistance = params.nominal_voltage * kt / params.stall_torque
        inductance = params.electrical_time_constant * resistance
        supply = _given(params.supply_voltage, params.nominal_voltage)
    else:
        kt = params.torque_constant
        ke = _given(params.back_emf_constant, kt)
        resistance = params.resistance
        inductance = params.inductance
        supply = _given(params.supply_voltage, math.inf)
    if 'lead' in given:
        if joint.type != 'prismatic':
            raise ConfigError(f'{name}: lead (m/rad) is for prismatic joints; joint '
                              f"'{joint.name}' is {joint.type}: give gear_ratio instead.")
        if 'gear_ratio' in given:
            raise ConfigError(f'{name}: give gear_ratio or lead, not both.')
        gear = 1.0 / params.lead
    else:
        gear = _given(params.gear_ratio, transmission_ratio or 1.0)
    return DriveModel(
        joint=joint.name, resistance=resistance, inductance=inductance, torque_constant=kt,
        back_emf_constant=ke, rotor_inertia=params.rotor_inertia, gear_ratio=gear,
        viscous_friction=params.viscous_friction, efficiency=params.efficiency,
        supply_voltage=supply, current_limit=params.current_limit,
        servo={k: getattr(params, k) for k in SERVO_KEYS if k in given})


def _given(value, default):
    """Return value, or default where the key was not given (None)."""
    return default if value is None else value
