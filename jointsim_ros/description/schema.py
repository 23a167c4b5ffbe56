"""
The config schema's vocabulary: a setting is a dataclass field with its unit, meaning and check.

Every configuration key is written once, as a field of a frozen dataclass made with
:func:`setting`::

    iterations: int = setting(20, 'count', 'cap on velocity iterations per step', integer(1))

The field metadata holds the unit, the one-line meaning (for ``config/default.yaml`` and the
docs table) and the check: a callable ``(value, context) -> converted value`` that raises a
ConfigError naming the key, the value and what was expected (its ``expected`` attribute is that
text, for the docs).  :func:`keys_of` turns a dataclass into the table of :class:`Key` that
validation, ``default_yaml()`` and ``config_table()`` read (jointsim_ros/description/config.py).

Pure Python: the physics settings (jointsim_ros/description/config.py) use it too.
"""
from dataclasses import dataclass, field, fields, MISSING
import difflib
import math

from ..errors import ConfigError


def setting(default, unit, doc, check, note=''):
    """
    Return a dataclass field that is one configuration key.

    Args:
        default: the default value (a dict or list default is given as an empty dict or list
            and stored through a factory).
        unit: unit or kind of value ('s', 'm/s^2', 'count', 'true/false', 'section'...).
        doc: one-line meaning, for the generated YAML and docs table.
        check: callable (value, context) -> converted value; raises ConfigError.  A check
            made without a unit (``number(0.0)``, ``vector3()``) takes this one, so a key's
            unit is written once.
        note: optional longer explanation for the docs table only.

    Returns:
        dataclasses.Field.
    """
    if isinstance(check, NeedsUnit):
        check = check.bind(unit)
    metadata = {'unit': unit, 'doc': doc, 'check': check, 'note': note}
    if isinstance(default, (dict, list)):
        made = type(default)
        return field(default_factory=made, metadata=metadata)
    return field(default=default, metadata=metadata)


@dataclass(frozen=True)
class Key:
    """
    One configuration key of the schema, as read from a dataclass field.

    Attributes:
        name: the key.
        convert: callable (value, context) -> converted value; raises ConfigError.
        unit: unit or kind of value, for messages and the generated default YAML.
        doc: one-line meaning.
        default: the field's default value, or None when it has none.
        note: longer explanation for the docs table ('' for none).
    """

    name: str
    convert: object
    unit: str
    doc: str
    default: object = None
    note: str = ''


def keys_of(cls, doc_prefix=''):
    """
    Return the table of Keys of a settings dataclass (fields without metadata are skipped).

    Args:
        cls: a dataclass whose fields are made with :func:`setting`.
        doc_prefix: text put before every key's doc (for shared groups of keys).

    Returns:
        tuple of Key, in field order.
    """
    out = []
    for item in fields(cls):
        meta = item.metadata
        if 'check' not in meta:
            continue
        if item.default is not MISSING:
            default = item.default
        elif item.default_factory is not MISSING:
            default = item.default_factory()
        else:
            default = None
        out.append(Key(item.name, meta['check'], meta['unit'], doc_prefix + meta['doc'],
                       default, meta['note']))
    return tuple(out)


@dataclass(frozen=True)
class Context:
    """Where a value sits: the config source and the dotted key path."""

    source: str
    path: str

    def child(self, key):
        """Return the context of a sub-key."""
        return Context(self.source, f'{self.path}.{key}' if self.path else str(key))

    def fail(self, expected, value):
        """Raise the ConfigError for a value that is not what the key expects."""
        raise ConfigError(
            f"{self.source}: key '{self.path}' must be {expected}, got {value!r} "
            f'({type(value).__name__}).')


class NeedsUnit:
    """A check made without a unit; :func:`setting` completes it with its key's unit."""

    def __init__(self, factory, *args, **kwargs):
        self._make = (factory, args, kwargs)

    def bind(self, unit):
        """Return the check, with ``unit`` in its messages."""
        factory, args, kwargs = self._make
        return factory(*args, unit=unit, **kwargs)

    def __call__(self, value, context):
        """Refuse to check: only a setting's check knows its unit."""
        raise TypeError('a check made without a unit is only usable through setting()')


def _expects(expected):
    """Decorate a check with the text of what it expects (for the docs table)."""
    def mark(convert):
        convert.expected = expected
        return convert
    return mark


# ---- checks: each checks one kind of value and says what it expected ----

def is_number(value):
    """Return True for an int or float that is not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def number(minimum=None, strict=False, unit=None, maximum=None, finite_word=False):
    """
    Return a check for a finite real number, optionally > or >= minimum and <= maximum.

    Args:
        minimum: lower bound or None.
        strict: the bound excludes the minimum.
        unit: unit named in the message ('' for none; None: the setting's, see NeedsUnit).
        maximum: upper bound or None; a value above it fails with 'a number in [0, 1]' style
            text unless ``finite_word`` (the drive keys' wording) is set.
        finite_word: say 'a finite number' (and 'and <= maximum') as the drive keys do.
    """
    if unit is None:
        return NeedsUnit(number, minimum, strict, maximum=maximum, finite_word=finite_word)
    bound = ''
    if minimum is not None:
        bound = f" {'>' if strict else '>='} {minimum:g}"
    word = 'a finite number' if finite_word else 'a number'
    upper = f' and <= {maximum:g}' if finite_word and maximum is not None else ''
    expected = f"{word}{bound}{upper}{' (' + unit + ')' if unit else ''}"
    above = expected if finite_word else f'a number in [{minimum or 0:g}, {maximum or 0:g}]'

    @_expects(expected if maximum is None or finite_word
              else f'a number in [{minimum or 0:g}, {maximum:g}] ({unit})')
    def convert(value, context):
        if not is_number(value) or not math.isfinite(value):
            context.fail(expected, value)
        if minimum is not None and (value < minimum or (strict and value == minimum)):
            context.fail(expected, value)
        if maximum is not None and value > maximum:
            context.fail(above, value)
        return float(value)
    return convert


def fraction(unit=None):
    """Return a check for a number in [0, 1] (unit None: the setting's)."""
    return number(0.0, unit=unit, maximum=1.0)


def integer(minimum, unit=None):
    """Return a check for an integer >= minimum (integral floats such as 20.0 pass)."""
    if unit is None:
        return NeedsUnit(integer, minimum)
    expected = f'an integer >= {minimum} ({unit})'

    @_expects(expected)
    def convert(value, context):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            context.fail(expected, value)
        return value
    return convert


@_expects('true or false')
def boolean(value, context):
    """Check a bool."""
    if not isinstance(value, bool):
        context.fail('true or false', value)
    return value


@_expects("'auto', true or false")
def auto_boolean(value, context):
    """Check 'auto', true or false."""
    if value not in ('auto', True, False):
        context.fail("'auto', true or false", value)
    return value


def vector3(unit=None):
    """Return a check for a list of three finite numbers (unit None: the setting's)."""
    if unit is None:
        return NeedsUnit(vector3)
    expected = f'a list of 3 numbers ({unit})'

    @_expects(expected)
    def convert(value, context):
        if (not isinstance(value, (list, tuple)) or len(value) != 3
                or not all(is_number(v) and math.isfinite(v) for v in value)):
            context.fail(expected, value)
        return tuple(float(v) for v in value)
    return convert


def axes3(minimum=None, unit=None):
    """
    Return a check for per-axis values: one number for all three axes, or a list x, y, z.

    Args:
        minimum: lower bound (inclusive) of every value, or None.
        unit: unit named in the message (None: the setting's, see NeedsUnit).
    """
    if unit is None:
        return NeedsUnit(axes3, minimum)
    bound = f' >= {minimum:g}' if minimum is not None else ''
    expected = f'a number{bound} or a list of 3 such numbers x, y, z ({unit})'

    def ok(v):
        return is_number(v) and math.isfinite(v) and (minimum is None or v >= minimum)

    @_expects(expected)
    def convert(value, context):
        if ok(value):
            return (float(value),) * 3
        if not isinstance(value, (list, tuple)) or len(value) != 3 or not all(
                ok(v) for v in value):
            context.fail(expected, value)
        return tuple(float(v) for v in value)
    return convert


def choice(*options):
    """Return a check for one of a few strings."""
    expected = 'one of ' + ', '.join(f"'{o}'" for o in options)

    @_expects(expected)
    def convert(value, context):
        if value not in options:
            hint = difflib.get_close_matches(str(value), options, n=1, cutoff=0.6)
            context.fail(expected + (f" (did you mean '{hint[0]}'?)" if hint else ''), value)
        return value
    return convert


def name(what):
    """Return a check for a non-empty string: a link, joint or file name."""
    @_expects(what)
    def convert(value, context):
        if not isinstance(value, str) or not value:
            context.fail(what, value)
        return value
    return convert


def joint_numbers(unit=None):
    """Return a check for a mapping joint name -> finite number (unit None: the setting's)."""
    if unit is None:
        return NeedsUnit(joint_numbers)

    @_expects(f'a mapping of joint name to number ({unit})')
    def convert(value, context):
        if value is None:
            return {}
        if not isinstance(value, dict):
            context.fail(f'a mapping of joint name to number ({unit})', value)
        result = {}
        for joint, item in value.items():
            if not isinstance(joint, str):
                context.fail('a mapping with joint names (strings) as keys', joint)
            result[joint] = number(unit=unit)(item, context.child(joint))
        return result
    return convert


@_expects('a list of joint names (strings)')
def joint_names(value, context):
    """Check a list of joint names; return them as a tuple without repeats."""
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        context.fail('a list of joint names (strings)', value)
    return tuple(dict.fromkeys(value))


@_expects('a list of [link, link] pairs')
def pair_list(value, context):
    """Check a list of [link, link] pairs; return a tuple of tuples."""
    if value is None:
        return ()
    if (not isinstance(value, (list, tuple))
            or not all(isinstance(p, (list, tuple)) and len(p) == 2
                       and all(isinstance(n, str) for n in p) for p in value)):
        context.fail('a list of [link, link] pairs', value)
    return tuple(tuple(p) for p in value)


@_expects('a list of directories (strings)')
def path_list(value, context):
    """Check a directory or a list of directories; return a tuple."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        context.fail('a list of directories (strings)', value)
    return tuple(value)


def convert_table(table, data, context, known=None):
    """
    Validate a mapping against a table of Keys.

    Args:
        table: tuple of Key.
        data: the mapping.
        context: Context of the mapping.
        known: text that ends the unknown-key message instead of 'Known keys in PATH: ...'.

    Returns:
        dict name -> converted value (given keys only).
    """
    keys = {k.name: k for k in table}
    values = {}
    for key, value in data.items():
        if key not in keys:
            where = f' in {context.path}' if context.path else ''
            hint = difflib.get_close_matches(str(key), keys, n=1, cutoff=0.6)
            suggestion = f"; did you mean '{hint[0]}'?" if hint else '.'
            tail = known or f"Known keys{where}: {', '.join(keys)}."
            raise ConfigError(
                f"{context.source}: unknown key '{key}'{where}{suggestion}  {tail}")
        values[key] = keys[key].convert(value, context.child(key))
    return values


def section(cls, check=None):
    """
    Return a check for a mapping of ``cls``'s keys that builds ``cls(**values)``.

    Args:
        cls: settings dataclass.
        check: optional callable (settings, context) run after building, for checks across
            keys.
    """
    def convert(value, context):
        table = keys_of(cls)
        if value is None:
            return cls()
        if not isinstance(value, dict):
            context.fail('a mapping with keys ' + ', '.join(k.name for k in table), value)
        built = cls(**convert_table(table, value, context))
        if check is not None:
            check(built, context)
        return built
    convert.expected = 'section'
    convert.section = cls
    return convert


def plain_section(cls):
    """Return a check for a sub-mapping of ``cls``'s keys, as a dict of the given keys."""
    def convert(value, context):
        table = keys_of(cls)
        if value is None:
            return {}
        if not isinstance(value, dict):
            context.fail('a mapping with keys ' + ', '.join(k.name for k in table), value)
        return convert_table(table, value, context)
    convert.expected = 'section'
    convert.section = cls
    return convert


def named_sections(cls, what, required=(), item_check=None, known=None, mapping_text=None):
    """
    Return a check for a mapping name -> mapping of ``cls``'s keys (``joints``, ``drives``...).

    The value is a dict name -> ``cls`` instance: a key left out takes its field default
    (None where the default is derived from something else: the field's doc says what).

    Args:
        cls: dataclass whose fields are the keys of one item.
        what: what an item is named by ('joint', 'link', 'sensor'...), for messages.
        required: keys every item must give; a missing one fails with 'a mapping with ...'.
        item_check: optional callable (name, item, raw, context) for checks across keys.
        known: unknown-key message ending (see :func:`convert_table`).
        mapping_text: what the whole section must be, for messages (default derived).
    """
    def convert(value, context):
        table = keys_of(cls)
        keys = ', '.join(k.name for k in table)
        if value is None:
            return {}
        if not isinstance(value, dict):
            context.fail(mapping_text or f'a mapping {what} name -> {{{keys}}}', value)
        out = {}
        for item_name, params in value.items():
            where = context.child(item_name)
            if not isinstance(params, dict):
                where.fail('a mapping with keys ' + keys, params)
            item = convert_table(table, params, where, known)
            missing = [k for k in required if k not in item]
            if missing:
                where.fail('a mapping with ' + ', '.join(missing), params)
            if item_check is not None:
                item_check(item_name, item, params, where)
            out[str(item_name)] = cls(**item)
        return out
    convert.expected = 'section'
    convert.section = cls
    convert.named = what
    return convert
