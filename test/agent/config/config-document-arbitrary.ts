// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${NAME} references are among the generated values.
/**
 * Agent configuration documents for load.fuzz-inputs.test.ts (fuzzing agent config
 * files), assembled from settings that are each mostly right and now and then wrong, in the shape
 * IT staff write (docs/decisions/0023-agent-yaml-configuration.md): many load, and the rest fail late, in the
 * cross-field checks.
 */
import fc from 'fast-check'

/**
 * A document assembled from settings, each mostly right and now and then wrong, so that many load
 * (and reach the build check) and the rest fail late, in the cross-field checks.
 */
const rightOr = <T, U>(right: fc.Arbitrary<T>, wrong: fc.Arbitrary<U>) =>
  fc.oneof({ weight: 30, arbitrary: right }, { weight: 1, arbitrary: wrong })
const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 2 })
const zone = rightOr(
  fc.constantFrom('Asia/Kolkata', 'America/St_Johns', 'UTC', 'Etc/GMT+5', 'Pacific/Chatham'),
  fc.constantFrom('IST', 'Asia/Nowhere', '', '+05:30'),
)
const csvArb = fc.record({
  delimiter: optional(rightOr(fc.constantFrom(',', ';', '\t', '|'), fc.constantFrom('', ',,', '"', '\n'))),
  columns: fc.record({
    employeeCode: rightOr(fc.integer({ min: 0, max: 3 }), fc.constant(-1)),
    punchedAt: optional(fc.integer({ min: 0, max: 3 })),
    status: rightOr(fc.integer({ min: 0, max: 3 }), fc.constant(undefined)),
    punchType: optional(fc.integer({ min: 0, max: 3 })),
  }),
})
const serialArb = fc.record({
  path: rightOr(fc.constantFrom('/dev/ttyUSB0', '/dev/ttyUSB1', 'COM3'), fc.constant('')),
  baudRate: optional(
    rightOr(fc.constantFrom(9600, 50, 4_000_000, 115_200), fc.constantFrom(0, 115_200.5, '9600')),
  ),
  dataBits: optional(rightOr(fc.constantFrom(5, 7, 8), fc.constant(9))),
  parity: optional(rightOr(fc.constantFrom('none', 'even', 'mark'), fc.constant('NONE'))),
  stopBits: optional(rightOr(fc.constantFrom(1, 1.5, 2), fc.constant(3))),
  framing: optional(
    rightOr(
      fc.oneof(
        fc.constant({ type: 'stx-etx' }),
        fc.record({
          type: fc.constant('line'),
          delimiter: optional(fc.constantFrom('\n', '\r\n', '#', ';;')),
        }),
      ),
      fc.constantFrom({ type: 'length' }, { type: 'line', delimiter: '' }),
    ),
  ),
  format: optional(rightOr(fc.constantFrom('zk-attlog', 'csv', 'json'), fc.constant('xml'))),
  csv: optional(csvArb),
})
const deviceArb = fc.record({
  id: rightOr(
    fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,8}$/),
    fc.constantFrom('', '-x', 'a b', 'gate-1'),
  ),
  timezone: optional(zone),
  transport: fc.constantFrom('mqtt', 'serial', 'both'),
  mqtt: fc.record({
    topic: rightOr(
      fc.stringMatching(/^[a-z0-9-]{1,8}(\/[a-z0-9-]{1,8}){0,2}(\/\+|\/#)?$/),
      fc.constantFrom('#', '', 'a//b', '$SYS/x', 'a/#/b', 'a+'),
    ),
    format: optional(rightOr(fc.constantFrom('json', 'zk-attlog'), fc.constant('csv'))),
  }),
  serial: serialArb,
  statusMap: optional(
    fc.dictionary(
      rightOr(fc.constantFrom('0', '1', '17', '255'), fc.constantFrom('01', 'x', '1000')),
      rightOr(fc.constantFrom('IN', 'OUT'), fc.constant('BREAK')),
      { maxKeys: 3 },
    ),
  ),
  punchType: optional(rightOr(fc.constantFrom('IN', 'OUT'), fc.constant('in'))),
})

/** Documents whose secrets (and a URL's password) carry `mark`, so a message that repeats one is found. */
export const configDocumentArbitrary = (mark: string) =>
  fc
    .record({
      site: fc.record({
        id: rightOr(fc.constantFrom('pune-plant-1', 'x'), fc.constantFrom('', '-x')),
        timezone: optional(zone),
        clockFloor: optional(
          rightOr(
            fc.constantFrom('2020-01-01T00:00:00Z', '2026-01-01T09:00:00+05:30'),
            fc.constantFrom('2099-01-01T00:00:00Z', 'yesterday', '2020-01-01'),
          ),
        ),
      }),
      cloud: fc.record({
        url: rightOr(
          fc.constantFrom('https://hajri.example.com', 'http://127.0.0.1:8080/', 'https://h.example/base/'),
          fc.constantFrom(
            'https://[::1]:99999',
            'https://',
            'ftp://x',
            'https://h/a b',
            `https://user:${mark}@h`,
          ),
        ),
        clientId: rightOr(fc.constantFrom('hjc_pune', 'a'), fc.constantFrom('', 'x'.repeat(129))),
        secret: rightOr(
          fc.constantFrom(
            { clientSecret: `${mark}-inline` },
            { clientSecret: '${HAJRI_CLIENT_SECRET}' },
            { clientSecretFile: 'secret.txt' },
          ),
          fc.constantFrom(
            {},
            { clientSecret: '' },
            { clientSecret: '${UNSET}' },
            { clientSecretFile: 'missing.txt' },
            { clientSecret: `${mark}-x`, clientSecretFile: 'secret.txt' },
          ),
        ),
        timeoutSeconds: optional(rightOr(fc.constantFrom(1, 15, 300), fc.constantFrom(0, 301))),
        concurrency: optional(rightOr(fc.constantFrom(1, 2, 16), fc.constantFrom(0, 17))),
        batchSize: optional(rightOr(fc.constantFrom(1, 500), fc.constantFrom(0, 501))),
      }),
      spool: optional(
        fc.record({
          dir: optional(
            rightOr(fc.constantFrom('spool', '/var/lib/hajri-agent/spool', '../x'), fc.constant('')),
          ),
          maxBytes: optional(
            rightOr(
              fc.constantFrom('2GiB', '1MiB', 1_048_576, '500MB'),
              fc.constantFrom('1023KiB', '0B', 'lots', '99999999TiB', 1.5),
            ),
          ),
          chunkPunches: optional(rightOr(fc.constantFrom(1, 500, 10_000), fc.constantFrom(0, 10_001))),
        }),
      ),
      status: optional(
        fc.record({
          listen: rightOr(
            fc.constantFrom('127.0.0.1:9410', '[::1]:9410', '0.0.0.0:9410', 'localhost:9410'),
            fc.constantFrom('[::1]:0', '0.0.0.0:65536', ':9410', '9410', '[::1', 'host:port'),
          ),
        }),
      ),
      log: optional(
        fc.record({
          level: optional(rightOr(fc.constantFrom('info', 'debug'), fc.constant('loud'))),
          pretty: optional(rightOr(fc.boolean(), fc.constant('yes'))),
        }),
      ),
      broker: fc.constantFrom('embedded', 'external'),
      embedded: fc.record({
        host: optional(rightOr(fc.constantFrom('127.0.0.1', '0.0.0.0', '::'), fc.constant('not a host'))),
        port: optional(rightOr(fc.constantFrom(1883, 8883), fc.constantFrom(0, 65_536))),
        users: fc.uniqueArray(
          fc.record({
            username: rightOr(fc.constantFrom('gate-1', 'canteen'), fc.constant('')),
            secret: rightOr(
              fc.constantFrom(
                { password: `${mark}-pw` },
                { password: '${HAJRI_CANTEEN_MQTT_PASSWORD}' },
                { passwordFile: 'gate-1.pass' },
              ),
              fc.constantFrom(
                {},
                { passwordFile: 'missing.pass' },
                { password: `${mark}`, passwordFile: 'gate-1.pass' },
              ),
            ),
          }),
          { maxLength: 2, selector: (u) => u.username },
        ),
      }),
      external: fc.record({
        url: rightOr(
          fc.constantFrom('mqtt://broker:1883', 'mqtts://broker'),
          fc.constantFrom('http://broker', ''),
        ),
        clientId: rightOr(fc.constant('hajri-agent'), fc.constant('')),
      }),
      devices: fc.array(deviceArb, { minLength: 1, maxLength: 4 }),
      /** The device whose settings are left tangled (a shared port, csv without the csv format...). */
      tangle: fc.oneof({ weight: 6, arbitrary: fc.constant(-1) }, { weight: 1, arbitrary: fc.nat(3) }),
    })
    .map((d) => {
      const drop = <T extends object>(o: T) =>
        Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>
      // Each device a port and a topic of its own, a csv block only with the csv format, and a
      // punchType or a statusMap, not both; unless `tangle` keeps what the generators made.
      const devices = d.devices.map(({ transport, mqtt, serial, id, statusMap, punchType, ...rest }, i) => {
        const tangle = d.tangle === i
        const format = serial.format
        const csv =
          format === 'csv' || tangle ? (serial.csv ?? { columns: { employeeCode: 0, status: 2 } }) : undefined
        return drop({
          ...rest,
          id: tangle ? id : `${id}-${i}`,
          ...(tangle || punchType === undefined ? { statusMap } : { punchType }),
          ...(transport !== 'serial'
            ? { mqtt: drop({ ...mqtt, topic: tangle ? mqtt.topic : `d${i}/${mqtt.topic}` }) }
            : {}),
          ...(transport !== 'mqtt'
            ? {
                serial: drop({
                  ...serial,
                  path: tangle || serial.path === '' ? serial.path : `${serial.path}-${i}`,
                  csv: csv && drop({ ...csv, columns: drop(csv.columns) }),
                }),
              }
            : {}),
        })
      })
      const usesMqtt = d.devices.some((x) => x.transport !== 'serial')
      const { secret, ...cloud } = d.cloud
      return drop({
        site: drop(d.site),
        cloud: drop({ ...cloud, ...secret }),
        spool: d.spool && drop(d.spool),
        status: d.status,
        log: d.log && drop(d.log),
        mqtt: usesMqtt
          ? d.broker === 'embedded'
            ? {
                embedded: drop({
                  ...d.embedded,
                  users: d.embedded.users.map(({ secret: s, ...u }) => ({ ...u, ...s })),
                }),
              }
            : { external: drop(d.external) }
          : undefined,
        devices,
      })
    })
