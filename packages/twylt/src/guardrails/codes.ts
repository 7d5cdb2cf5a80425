/**
 * Wire names of the guardrails (docs/TWYLT.md section 7): the environment variables, the
 * deny codes and the incident record. Pure data, shared by the policy and its tests.
 */

export const GUARDRAILS_ENV = {
  enabled: 'TWYLT_GUARDRAILS',
  workspaceRoot: 'TWYLT_WORKSPACE_ROOT',
  allowedCwd: 'TWYLT_ALLOWED_CWD',
  disableNetwork: 'TWYLT_DISABLE_NETWORK',
  incidentLog: 'TWYLT_INCIDENT_LOG',
} as const;

/** Every `code` a denial can carry, the same as the Python reference's. */
export const DENY_CODES = [
  // business paths
  'invalid_path',
  'invalid_path_syntax',
  'path_outside_workspace',
  'symlink_forbidden',
  'hardlink_forbidden',
  'special_file_forbidden',
  'mount_boundary_forbidden',
  'workspace_root_mutation_forbidden',
  // network
  'network_disabled',
  // file transport
  'transport_cwd_or_path_outside_allowed_roots',
  // configuration found unusable when the policy needs it
  'workspace_not_configured',
  'invalid_workspace_root',
  'filesystem_root_forbidden',
  'invalid_incident_log',
  'incident_log_inside_workspace',
  // the incident could not be recorded: the run fails closed
  'incident_log_unavailable',
] as const;
export type DenyCode = (typeof DENY_CODES)[number];

export const INCIDENT_EVENT = 'workspace_incident';
export const INCIDENT_SCHEMA_VERSION = '1.0';
/** A requested path is cut to this many characters in an incident record. */
export const REQUESTED_PATH_LIMIT = 1024;
