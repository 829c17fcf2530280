import { describe, expect, it } from 'vitest';
import { canAddModels, canDeleteModel, nameFromFile, newModelBody, paramCount } from '../../src/modelForm';
import type { Me, Model } from '../../src/types';

const me = (role: Me['role'], id = 'usr_1') => ({ id, username: 'u', role }) as Me;
const model = (builtin: boolean, created_by: string | null) => ({ name: 'm', builtin, created_by }) as Model;

describe('newModelBody', () => {
  it('sends YAML as written', () => {
    const text = 'base_emb_dim: 2560\nrope_max_timescale: 50_000\n';
    const { body, errors } = newModelBody({ name: ' almodel-team ', description: '', text });
    expect(errors).toEqual([]);
    expect(body).toEqual({ name: 'almodel-team', yaml: text });
  });
  it('sends a JSON object as config', () => {
    const { body } = newModelBody({ name: 'm', description: 'one line', text: '{"base_emb_dim": 512}' });
    expect(body).toEqual({ name: 'm', description: 'one line', config: { base_emb_dim: 512 } });
  });
  it('leaves a YAML flow mapping that is not JSON to the server as YAML', () => {
    const { body } = newModelBody({ name: 'm', description: '', text: '{base_emb_dim: 512}' });
    expect(body.yaml).toBe('{base_emb_dim: 512}');
    expect(body.config).toBeUndefined();
  });
  it('needs a name and a config', () => {
    const { errors } = newModelBody({ name: '  ', description: '', text: ' \n' });
    expect(errors.map((e) => e.field)).toEqual(['name', 'yaml']);
  });
});

describe('who adds and deletes', () => {
  it('writers add, viewers do not', () => {
    expect(canAddModels(me('member'))).toBe(true);
    expect(canAddModels(me('viewer'))).toBe(false);
    expect(canAddModels(null)).toBe(false);
  });
  it('never a built-in; the creator or an admin otherwise', () => {
    expect(canDeleteModel(me('admin'), model(true, null))).toBe(false);
    expect(canDeleteModel(me('admin'), model(false, 'usr_2'))).toBe(true);
    expect(canDeleteModel(me('member', 'usr_2'), model(false, 'usr_2'))).toBe(true);
    expect(canDeleteModel(me('member', 'usr_1'), model(false, 'usr_2'))).toBe(false);
    expect(canDeleteModel(me('viewer', 'usr_2'), model(false, 'usr_2'))).toBe(false);
  });
});

describe('helpers', () => {
  it('names a model after its file', () => {
    expect(nameFromFile('almodel-8b.yml')).toBe('almodel-8b');
    expect(nameFromFile('C:\\configs\\team.JSON')).toBe('team');
    expect(nameFromFile('m.yaml')).toBe('m');
  });
  it('formats parameter counts', () => {
    expect(paramCount(18_920_000_000)).toBe('18.9 B');
    expect(paramCount(6_738_415_616)).toBe('6.74 B');
    expect(paramCount(853_120)).toBe('853 K');
    expect(paramCount(null)).toBe('–');
  });
});
