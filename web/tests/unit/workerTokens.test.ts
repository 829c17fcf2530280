import { describe, expect, it } from 'vitest';
import { joinCommand, placeIndex, shellQuote } from '../../src/workerTokens';

// A real shell reads the words back (Vitest runs in Node; the dashboard's tsconfig has no Node types).
const { execFileSync } = (await import('node:child_process' as string)) as {
  execFileSync: (file: string, args: string[]) => { toString(): string };
};

const join = { server: 'https://podium.example.com', token: 'pdw_abc-DEF_123', cluster: 'v7-train', slice: 0, host: 3, workdir: '/var/lib/podium-worker', runAs: 'podium-train' };

describe('shell quoting', () => {
  it('leaves plain words alone and single-quotes the rest', () => {
    expect(shellQuote('v7-train')).toBe('v7-train');
    expect(shellQuote('https://h:8080/x')).toBe('https://h:8080/x');
    expect(shellQuote('a b')).toBe("'a b'");
    expect(shellQuote('')).toBe("''");
    expect(shellQuote("it's")).toBe("'it'\\''s'");
    expect(shellQuote('$(rm -rf /)')).toBe("'$(rm -rf /)'");
  });
  it('survives a real shell word for word', () => {
    const words = ['plain', 'a b', "it's", '$HOME', '`x`', 'a"b', '*', 'x;y', '\\n'];
    const out = execFileSync('sh', ['-c', `printf '%s\\n' ${words.map(shellQuote).join(' ')}`]).toString();
    expect(out).toBe(`${words.join('\n')}\n`);
  });
});

describe('join command', () => {
  it('is the form of docs/operations.md: server and token in the environment, the place in flags', () => {
    expect(joinCommand(join)).toBe(
      'PODIUM_SERVER=https://podium.example.com PODIUM_TOKEN=pdw_abc-DEF_123 \\\n'
      + '  podium-worker --cluster v7-train --slice 0 --host 3 --workdir /var/lib/podium-worker --run-as podium-train',
    );
  });
  it('keeps the token out of argv', () => {
    const argv = joinCommand(join).split('podium-worker ')[1];
    expect(argv).not.toContain(join.token);
  });
  it('quotes odd names, drops a trailing slash of the server and empty optional flags', () => {
    expect(joinCommand({ ...join, server: 'http://10.0.0.1:8080/', cluster: "team's pod", workdir: ' ', runAs: '' }))
      .toBe("PODIUM_SERVER=http://10.0.0.1:8080 PODIUM_TOKEN=pdw_abc-DEF_123 \\\n  podium-worker --cluster 'team'\\''s pod' --slice 0 --host 3");
  });
  it('gives the shell the words it means', () => {
    const cmd = joinCommand({ ...join, cluster: 'a b', runAs: "o'k" }).replace('podium-worker', 'printf "%s|"');
    expect(execFileSync('sh', ['-c', cmd]).toString()).toBe("--cluster|a b|--slice|0|--host|3|--workdir|/var/lib/podium-worker|--run-as|o'k|");
  });
});

describe('slice and host fields', () => {
  it('takes indexes inside the cluster', () => {
    expect(placeIndex('1', 2, 'slice')).toEqual({ value: 1 });
    expect(placeIndex(' 0 ', 1, 'host')).toEqual({ value: 0 });
  });
  it('says what is wrong otherwise', () => {
    expect(placeIndex('2', 2, 'slice').error).toBe('this cluster has 2 slices (0 to 1)');
    expect(placeIndex('8', 8, 'host').error).toBe('this cluster has 8 hosts per slice (0 to 7)');
    for (const bad of ['', '-1', '1.5', 'x']) expect(placeIndex(bad, 4, 'host').error).toBe('host is a whole number from 0');
  });
});
