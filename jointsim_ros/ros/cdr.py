"""
Serialized messages refilled in place: the node's high-rate topics without per-field rclpy work.

A ROS message published from Python is converted field by field to its C struct and then
serialized (CDR); for the humanoid's 23-transform TFMessage that costs about 0.1 ms to build
and 0.09 ms to publish, 200 times a second, besides the wrench, IMU and joint-state messages
of every tick.  Between two publishes of such a topic only numbers change: the frame ids,
names and sequence lengths stay.  A :class:`MessageTemplate` serializes the message once with
rclpy's own serializer, with sentinel numbers in its float64 fields and a sentinel stamp in its
headers, finds where they landed, and afterwards writes new numbers into a copy of those bytes,
which ``Publisher.publish`` sends as they are (rclpy's ``publish_raw``).  The layout is
rclpy's, whatever the middleware's CDR flavour; a template whose sentinels it cannot find
raises, and the caller builds messages the ordinary way.
"""
import numpy as np
from rclpy.serialization import serialize_message

#: The stamp every header of a template's prototype carries: 777777.25 s, exact in binary and
#: unlike any count, length or character the messages hold.
SENTINEL_SECONDS = 777_777.25
_SENTINEL_SEC, _SENTINEL_NANOSEC = 777_777, 250_000_000


def _sentinels(count):
    """Return ``count`` distinct finite float64 values no message would hold by chance."""
    bits = np.uint64(0x7E5A_3C96_0000_0000) + np.arange(count, dtype=np.uint64) * np.uint64(
        0x0000_0001_0001_0001)
    return bits.view(np.float64)


class TemplateError(ValueError):
    """The prototype message does not hold its sentinels verbatim: build it the ordinary way."""


class MessageTemplate:
    """
    A message type's serialized form with the places of its float64 fields and its stamps.

    Args:
        build: f(values (count,) float64, seconds) -> the message, with each value verbatim in
            one float64 field (in any order the caller keeps) and ``stamp(seconds)`` in every
            header; everything else (frame ids, names, constants such as covariances) as
            every later message has it.
        count: how many values.

    Raises:
        TemplateError: a value or the stamp is not found exactly where one number fits.
    """

    def __init__(self, build, count):
        self.count = count
        sentinels = _sentinels(count)
        raw = serialize_message(build(sentinels.copy(), SENTINEL_SECONDS))
        if len(raw) < 4:
            raise TemplateError('a serialized message shorter than its encapsulation header')
        # the encapsulation header's second byte: odd for little-endian CDR
        order = '<' if raw[1] & 1 else '>'
        self._buffer = bytearray(raw)
        # every float64 field: its sentinel's bytes found once
        self._doubles = {}          # alignment (offset mod 8) -> (view, indices, value columns)
        places = {}
        for k, value in enumerate(sentinels):
            pattern = np.array([value], dtype=order + 'f8').tobytes()
            at = raw.find(pattern)
            if at < 0 or raw.find(pattern, at + 1) >= 0:
                raise TemplateError(f'value {k} of {count} is not in the serialized message '
                                    'exactly once')
            places.setdefault(at % 8, []).append((at, k))
        for shift, found in places.items():
            view = np.frombuffer(self._buffer, dtype=order + 'f8', offset=shift,
                                 count=(len(self._buffer) - shift) // 8)
            self._doubles[shift] = (view, np.array([(at - shift) // 8 for at, _ in found]),
                                    np.array([k for _, k in found]))
        # every stamp: the sentinel seconds followed by the sentinel nanoseconds
        pattern = (np.array([_SENTINEL_SEC, _SENTINEL_NANOSEC], dtype=order + 'u4').tobytes())
        stamps, at = [], raw.find(pattern)
        while at >= 0:
            stamps.append(at)
            at = raw.find(pattern, at + 1)
        self._stamps = {}           # alignment (offset mod 4) -> (view, indices of the seconds)
        for shift in {at % 4 for at in stamps}:
            view = np.frombuffer(self._buffer, dtype=order + 'u4', offset=shift,
                                 count=(len(self._buffer) - shift) // 4)
            self._stamps[shift] = (view, np.array([(at - shift) // 4 for at in stamps
                                                   if at % 4 == shift]))
        self.stamps = len(stamps)

    def fill(self, values, seconds):
        """
        Return the serialized message with these values and this stamp (bytes to publish).

        Args:
            values: (count,) the numbers, in the order ``build`` placed them.
            seconds: simulated time of every header's stamp, s (>= 0).
        """
        values = np.asarray(values, dtype=float)
        for view, indices, columns in self._doubles.values():
            view[indices] = values[columns]
        nanoseconds = int(round(seconds * 1e9))
        sec, nanosec = divmod(nanoseconds, 1_000_000_000)
        for view, indices in self._stamps.values():
            view[indices] = sec
            view[indices + 1] = nanosec
        return bytes(self._buffer)


class SerializedTopics:
    """
    The node's publishing through templates: one per (topic, layout) key, made on first use.

    Args:
        logger: the node's logger (a template that cannot be made is reported once, and that
            topic is published the ordinary way from then on).
    """

    def __init__(self, logger):
        self._logger = logger
        self._templates = {}

    def publish(self, publisher, key, build, values, seconds):
        """
        Publish ``build(values, seconds)`` on ``publisher``, through the key's template.

        Args:
            publisher: the topic's rclpy Publisher.
            key: hashable, the same for every message of one layout (names, frames, count).
            build: f(values, seconds) -> the message (see :class:`MessageTemplate`).
            values: (n,) the message's float64 numbers, in the order ``build`` takes them.
            seconds: the stamp, s.
        """
        template = self._templates.get(key, False)
        if template is False:
            try:
                template = MessageTemplate(build, len(values))
            except TemplateError as error:
                self._logger.warning(f'{publisher.topic_name}: publishing messages built '
                                     f'field by field ({error})')
                template = None
            self._templates[key] = template
        if template is None:
            publisher.publish(build(values, seconds))
        else:
            publisher.publish(template.fill(values, seconds))
