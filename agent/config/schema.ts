import { type Static, Type } from '@sinclair/typebox'
import { StringEnum } from '../../shared/schema-helpers.js'

/**
 * The agent's configuration (docs/decisions/0023-agent-yaml-configuration.md): one YAML file, checked against
 * this schema before anything starts. Defaults live here and nowhere else. Names may be added, never changed:
 * IT staff have files written against them. `agent.schema.json` is generated from this
 * (`hajri-agent schema`).
 */

const Id = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' })
const TimeZone = Type.String({ minLength: 1, description: 'IANA time zone, e.g. Asia/Kolkata.' })
const PunchType = StringEnum(['IN', 'OUT'] as const)
const SecretFile = Type.String({
  minLength: 1,
  description: 'A file holding the secret (trailing newline ignored).',
})

/** `2GiB`, `500MB`, `1048576`: bytes with an optional unit. */
const ByteSize = (options: { default: string; description: string }) =>
  Type.Union(
    [
      Type.Integer({ minimum: 1, description: 'a whole number of bytes' }),
      Type.String({
        pattern: '^\\d+(\\.\\d+)?\\s*(B|KB|KiB|MB|MiB|GB|GiB|TB|TiB)?$',
        description:
          'a size such as 2GiB, 512MiB or 500MB (KiB, MiB, GiB, TiB: powers of 1024; KB, MB, GB, TB: of 1000)',
      }),
    ],
    options,
  )

const Tls = Type.Object(
  {
    certFile: Type.String({ minLength: 1 }),
    keyFile: Type.String({ minLength: 1 }),
    caFile: Type.Optional(Type.String({ minLength: 1 })),
  },
  {
    additionalProperties: false,
    description: 'PEM files. With caFile, clients must present a certificate it signed.',
  },
)

const MqttUser = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 128 }),
    password: Type.Optional(Type.String({ minLength: 1 })),
    passwordFile: Type.Optional(SecretFile),
  },
  { additionalProperties: false },
)

const EmbeddedBroker = Type.Object(
  {
    host: Type.String({ default: '0.0.0.0', description: 'Address the broker listens on.' }),
    port: Type.Integer({ minimum: 1, maximum: 65535, default: 1883 }),
    tls: Type.Optional(Tls),
    users: Type.Array(MqttUser, {
      default: [],
      description: 'Who may connect. With none, any client may connect: only on a closed device network.',
    }),
  },
  { additionalProperties: false },
)

const ExternalBroker = Type.Object(
  {
    url: Type.String({
      pattern: '^(mqtts?|wss?|tcp|ssl)://',
      description: 'The site broker, e.g. mqtt://broker:1883.',
    }),
    clientId: Type.String({
      minLength: 1,
      maxLength: 128,
      description:
        'Fixed, so the broker keeps this session (and its unacknowledged punches) across restarts.',
    }),
    username: Type.Optional(Type.String({ minLength: 1 })),
    password: Type.Optional(Type.String({ minLength: 1 })),
    passwordFile: Type.Optional(SecretFile),
    caFile: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
)

const MqttDevice = Type.Object(
  {
    topic: Type.String({
      minLength: 1,
      description: 'The topic the device publishes on; + and # wildcards allowed.',
    }),
    format: StringEnum(['json', 'zk-attlog'] as const, { default: 'json' }),
    username: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description:
          "Embedded broker: only this user (of mqtt.embedded.users) may publish this device's punches, so one device's credentials cannot forge another's punches. Without it, any of the broker's users may (a warning when the broker has users).",
      }),
    ),
  },
  { additionalProperties: false },
)

const LineFraming = Type.Object(
  {
    type: Type.Literal('line'),
    delimiter: Type.String({
      minLength: 1,
      default: '\n',
      description: 'What ends a record; \\r before it is dropped.',
    }),
  },
  { additionalProperties: false },
)

const StxEtxFraming = Type.Object(
  { type: Type.Literal('stx-etx') },
  { additionalProperties: false, description: 'Records between STX (0x02) and ETX (0x03).' },
)

const CsvOptions = Type.Object(
  {
    delimiter: Type.String({ minLength: 1, maxLength: 1, default: ',' }),
    columns: Type.Object(
      {
        employeeCode: Type.Integer({ minimum: 0 }),
        punchedAt: Type.Optional(Type.Integer({ minimum: 0 })),
        status: Type.Optional(Type.Integer({ minimum: 0 })),
        punchType: Type.Optional(Type.Integer({ minimum: 0 })),
      },
      { additionalProperties: false, description: 'Zero-based column of each field.' },
    ),
  },
  { additionalProperties: false },
)

const SerialDevice = Type.Object(
  {
    path: Type.String({ minLength: 1, description: 'e.g. /dev/ttyUSB0, /dev/serial/by-id/..., COM3.' }),
    baudRate: Type.Integer({ minimum: 50, maximum: 4_000_000, default: 9600 }),
    dataBits: Type.Union([Type.Literal(5), Type.Literal(6), Type.Literal(7), Type.Literal(8)], {
      default: 8,
    }),
    parity: StringEnum(['none', 'even', 'odd', 'mark', 'space'] as const, { default: 'none' }),
    stopBits: Type.Union([Type.Literal(1), Type.Literal(1.5), Type.Literal(2)], { default: 1 }),
    framing: Type.Union([LineFraming, StxEtxFraming], { default: { type: 'line', delimiter: '\n' } }),
    format: StringEnum(['zk-attlog', 'csv', 'json'] as const, { default: 'zk-attlog' }),
    csv: Type.Optional(CsvOptions),
  },
  { additionalProperties: false },
)

/** Device addresses or subnets (CIDR), IPv4 or IPv6. */
const AddressList = (description: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 256, description })

const AdmsDevice = Type.Object(
  {
    serialNumber: Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$',
      description:
        "The terminal's serial number (SN) as it sends it: Menu → System Info → Device Info, or the label on its back.",
    }),
    allowFrom: Type.Optional(
      AddressList(
        'Only these addresses or subnets may speak for this device (on top of adms.allowFrom). The serial number is all a push device sends to identify itself, so this stops another machine on the LAN from posing as it.',
      ),
    ),
  },
  { additionalProperties: false },
)

/**
 * A ZKTeco-family terminal the agent reads over the ZK binary protocol on port 4370
 * (docs/development/zk-protocol.md). The agent only reads it: its log is never cleared and its
 * users never written, unless IT staff run `hajri-agent devices clear-log`.
 */
const ZkDeviceSection = Type.Object(
  {
    host: Type.String({
      minLength: 1,
      maxLength: 253,
      pattern: '^[A-Za-z0-9.:_-]+$',
      description: "The terminal's IP address or host name on the LAN (Menu → Comm. → Ethernet).",
    }),
    port: Type.Integer({ minimum: 1, maximum: 65535, default: 4370 }),
    transport: StringEnum(['tcp', 'udp', 'auto'] as const, {
      default: 'auto',
      description: 'auto: TCP, and UDP when the terminal takes no TCP connection (older firmware).',
    }),
    commKey: Type.Integer({
      minimum: 0,
      maximum: 999_999,
      default: 0,
      description:
        "The terminal's comm key (Menu → Comm. → Connection → COMM Key); 0 is the factory setting. The agent never logs it.",
    }),
    pollEvery: Type.String({
      pattern: '^\\d{1,9}[smh]?$',
      default: '5m',
      description:
        'How often the agent asks the terminal how many records it holds, and reads the new ones: 30s, 5m, 1h. With realtime, punches come as they happen and this read catches what was missed while disconnected.',
    }),
    realtime: Type.Boolean({
      default: true,
      description: 'Ask the terminal to report each punch as it happens (CMD_REG_EVENT), between reads.',
    }),
    setTime: Type.Boolean({
      default: false,
      description:
        "true: set the terminal's clock from the agent's (keep the agent's clock NTP-synced) whenever they differ by more than a minute. Off by default: `hajri-agent devices set-time` does it once.",
    }),
    timeoutSeconds: Type.Integer({
      minimum: 1,
      maximum: 120,
      default: 10,
      description: 'How long the agent waits for each answer before it drops the session and connects again.',
    }),
  },
  { additionalProperties: false },
)

/**
 * PIN to employee code: devices enrolled with plain numbers (PIN 42) for a tenant whose codes are
 * E0042. Numeric PINs are zero-padded to `width`, then `prefix` is put in front.
 */
const PinRule = Type.Object(
  {
    prefix: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 16,
        pattern: '^[A-Za-z0-9._-]+$',
        description: 'Put in front of every PIN, e.g. E.',
      }),
    ),
    width: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 32,
        description: 'Numeric PINs shorter than this are padded with zeros on the left (42 → 0042 for 4).',
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      "How a device's PIN becomes the employee code: PIN 42 with { prefix: E, width: 4 } is E0042. Without it the PIN is the code.",
  },
)

const Device = Type.Object(
  {
    id: Id,
    timezone: Type.Optional(TimeZone),
    mqtt: Type.Optional(MqttDevice),
    serial: Type.Optional(SerialDevice),
    adms: Type.Optional(AdmsDevice),
    zk: Type.Optional(ZkDeviceSection),
    pin: Type.Optional(PinRule),
    statusMap: Type.Optional(
      // Keys without leading zeros: the formats read a status as a number ("01" arrives as "1"), so a
      // key "01" could never match. Unknown keys are refused, not ignored (patternProperties alone
      // lets any other key through).
      Type.Record(Type.String({ pattern: '^(0|[1-9]\\d{0,2})$' }), PunchType, {
        additionalProperties: false,
        description:
          'Device status number → IN/OUT (ZKTeco: 0 check-in, 1 check-out, 2 break-out, 3 break-in, 4 overtime-in, 5 overtime-out).',
      }),
    ),
    punchType: Type.Optional(PunchType),
  },
  { additionalProperties: false },
)

export const AgentConfigSchema = Type.Object(
  {
    site: Type.Object(
      {
        id: Id,
        timezone: Type.String({
          minLength: 1,
          default: 'Asia/Kolkata',
          description: "IANA time zone of the devices' clocks, unless a device names its own.",
        }),
        clockFloor: Type.String({
          format: 'date-time',
          default: '2020-01-01T00:00:00Z',
          description:
            'A punch dated before this is a device with a reset clock: parked as device_clock_invalid.',
        }),
        pin: Type.Optional(PinRule),
      },
      { additionalProperties: false },
    ),
    cloud: Type.Object(
      {
        url: Type.String({
          pattern: '^https?://',
          description:
            'e.g. https://hajri.example.com. http:// only to this machine (localhost, 127.0.0.1, [::1]) unless allowInsecure is true.',
        }),
        allowInsecure: Type.Optional(
          Type.Boolean({
            default: false,
            description:
              'true: allow an http:// url to another machine. The client secret and every punch then cross the network in clear text: only for a network you trust, e.g. a TLS proxy on the same LAN segment.',
          }),
        ),
        clientId: Type.String({ minLength: 1, maxLength: 128 }),
        clientSecret: Type.Optional(Type.String({ minLength: 1 })),
        clientSecretFile: Type.Optional(SecretFile),
        scope: Type.String({ default: 'attendance:write' }),
        timeoutSeconds: Type.Integer({ minimum: 1, maximum: 300, default: 15 }),
        concurrency: Type.Integer({
          minimum: 1,
          maximum: 16,
          default: 2,
          description: 'Requests in flight at once.',
        }),
        batchSize: Type.Integer({ minimum: 1, maximum: 500, default: 500 }),
      },
      { additionalProperties: false },
    ),
    spool: Type.Object(
      {
        dir: Type.String({ minLength: 1, default: './spool' }),
        maxBytes: ByteSize({
          default: '2GiB',
          description:
            'When the spool holds this much, MQTT punches are refused (not acknowledged) and an alarm raised.',
        }),
        chunkPunches: Type.Integer({
          minimum: 1,
          maximum: 10_000,
          default: 500,
          description: 'Punches per chunk file at most.',
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    status: Type.Object(
      {
        listen: Type.String({
          pattern: '^[^:]+:\\d{1,5}$|^\\[[0-9a-fA-F:]+\\]:\\d{1,5}$',
          default: '127.0.0.1:9410',
          description:
            'host:port of the local status, health and metrics listener. Keep it on loopback (127.0.0.1, [::1]): what it shows includes employee codes and punch times. Any other address is a warning.',
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    log: Type.Object(
      {
        level: StringEnum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, {
          default: 'info',
        }),
        pretty: Type.Optional(
          Type.Boolean({ description: 'Human-readable lines; default: when stdout is a terminal.' }),
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    mqtt: Type.Optional(
      Type.Object(
        { embedded: Type.Optional(EmbeddedBroker), external: Type.Optional(ExternalBroker) },
        { additionalProperties: false },
      ),
    ),
    adms: Type.Optional(
      Type.Object(
        {
          listen: Type.String({
            pattern: '^[^:]+:\\d{1,5}$|^\\[[0-9a-fA-F:]+\\]:\\d{1,5}$',
            default: '0.0.0.0:8081',
            description:
              "host:port the ADMS (iclock push) listener takes: the address and port typed into each terminal's Cloud Server / ADMS menu.",
          }),
          allowFrom: Type.Optional(
            AddressList(
              'Only these addresses or subnets (e.g. 192.168.10.0/24) may connect; others are refused at once. Without it, any host that reaches the port may.',
            ),
          ),
          pollSeconds: Type.Integer({
            minimum: 1,
            maximum: 300,
            default: 10,
            description: "How often terminals ask for commands (the protocol's Delay).",
          }),
          errorDelaySeconds: Type.Integer({
            minimum: 1,
            maximum: 300,
            default: 30,
            description: 'How long a terminal waits before trying again after a failed request (ErrorDelay).',
          }),
          realtime: Type.Boolean({
            default: true,
            description:
              'Terminals upload each punch the moment it is made (Realtime=1); false: every minute.',
          }),
          maxBodyBytes: ByteSize({
            default: '2MiB',
            description:
              'The largest request body accepted; a larger one is refused (413) and the terminal keeps its records.',
          }),
          maxConnections: Type.Integer({
            minimum: 1,
            maximum: 10_000,
            default: 256,
            description: 'Connections open at once; more are refused until one closes.',
          }),
        },
        {
          additionalProperties: false,
          description:
            'Listener for ZKTeco/eSSL terminals that push over HTTP (ADMS, the /iclock/ protocol). Needed when a device has an adms section.',
        },
      ),
    ),
    devices: Type.Array(Device, { minItems: 1 }),
  },
  { additionalProperties: false, title: 'hajri-agent configuration' },
)

/** The file as written, defaults applied. */
export type AgentConfigFile = Static<typeof AgentConfigSchema>

/**
 * The configuration the agent runs with: the file with defaults applied, `${ENV}` substituted,
 * every `...File` secret read into its field, and sizes in bytes.
 */
export type AgentConfig = Omit<AgentConfigFile, 'cloud' | 'spool' | 'mqtt' | 'adms'> & {
  cloud: Omit<AgentConfigFile['cloud'], 'clientSecretFile'> & { clientSecret: string }
  spool: Omit<AgentConfigFile['spool'], 'maxBytes'> & { maxBytes: number }
  mqtt?: {
    embedded?: Omit<NonNullable<NonNullable<AgentConfigFile['mqtt']>['embedded']>, 'users'> & {
      users: { username: string; password: string }[]
    }
    external?: Omit<NonNullable<NonNullable<AgentConfigFile['mqtt']>['external']>, 'passwordFile'>
  }
  adms?: Omit<NonNullable<AgentConfigFile['adms']>, 'maxBodyBytes'> & { maxBodyBytes: number }
}

export type AdmsConfig = NonNullable<AgentConfig['adms']>

export type DeviceConfig = AgentConfig['devices'][number]

export type ZkDeviceConfig = NonNullable<DeviceConfig['zk']>

/** How a frame reached the agent: a device has a section per transport, each naming its record format. */
export type Transport = 'mqtt' | 'serial' | 'adms' | 'zk'
