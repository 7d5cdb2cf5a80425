/**
 * The probe: a tool whose contract uses most of what schemas offer, and whose output is its
 * validated input (defaults applied). Tests and the conformance checker use it to see
 * exactly what the runtime enforces and publishes.
 */
import { Tool } from 'twylt';
import { ProbeInput, ProbeOutput, type ProbeInputValue } from './schemas.ts';

class Probe extends Tool<typeof ProbeInput, typeof ProbeOutput> {
  inputSchema = ProbeInput;
  outputSchema = ProbeOutput;
  name = 'probe';
  version = '1.2.0';
  description = 'Return the validated input, defaults applied.';
  inputSchemaName = 'ProbeInput';
  inputSchemaVersion = '1.0.0';
  outputSchemaName = 'ProbeOutput';
  outputSchemaVersion = '1.0.0';
  fewShots = [
    {
      input: { name: 'Ada', count: 2, kind: 'probe' as const, point: { x: 1, y: 2 } },
      output: { name: 'Ada', count: 2, mode: 'safe' as const, kind: 'probe' as const, verbose: false, point: { x: 1, y: 2 }, tags: [] },
    },
  ];

  biz(input: ProbeInputValue) {
    return input;
  }
}

Probe.run();
