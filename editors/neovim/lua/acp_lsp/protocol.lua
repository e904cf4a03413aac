--- The acp/* LSP extension: method names, error codes and capability names.
--- Mirrors acp_lsp/protocol.py (a test fails when the two diverge); see docs/protocol.md.
local M = {}

M.VERSION = 1

--- Editor -> server requests.
M.requests = {
  list_agents = 'acp/listAgents',
  new_session = 'acp/newSession',
  list_sessions = 'acp/listSessions',
  load_session = 'acp/loadSession',
  get_session = 'acp/getSession',
  prompt = 'acp/prompt',
  cancel = 'acp/cancel',
  set_mode = 'acp/setMode',
  set_config_option = 'acp/setConfigOption',
  close_session = 'acp/closeSession',
  delete_session = 'acp/deleteSession',
  set_follow = 'acp/setFollow',
  review_edit = 'acp/reviewEdit',
  authenticate = 'acp/authenticate',
  restart_agent = 'acp/restartAgent',
  logout = 'acp/logout',
  fork_session = 'acp/forkSession',
  rename_session = 'acp/renameSession',
  export_session = 'acp/exportSession',
  install_agent = 'acp/installAgent',
  update_agent = 'acp/updateAgent',
  restore_checkpoint = 'acp/restoreCheckpoint',
  rewind_session = 'acp/rewindSession',
}

--- Server -> editor notifications.
M.notifications = {
  session_update = 'acp/sessionUpdate',
  session_status = 'acp/sessionStatus',
  terminal_output = 'acp/terminalOutput',
  elicitation_complete = 'acp/elicitationComplete',
  documents_synced = 'acp/documentsSynced',
}

--- Server -> editor requests.
M.server_requests = {
  request_permission = 'acp/requestPermission',
  save_document = 'acp/saveDocument',
  elicitation = 'acp/elicitation',
  editor_tool = 'acp/editorTool',
}

--- JSON-RPC error codes of DESIGN §2.
M.errors = {
  invalid_params = -32602,
  internal_error = -32603,
  auth_required = -32000,
  unknown_session = -32001,
  resource_not_found = -32002,
  unknown_agent = -32003,
  turn_running = -32004,
  agent_unavailable = -32005,
  not_supported = -32006,
  agent_error = -32007,
  request_cancelled = -32800,
}

M.statuses = { 'idle', 'running', 'awaiting_permission', 'cancelling', 'failed', 'closed', 'stored' }

--- What this front end declares in capabilities.experimental.acp of `initialize`.
M.client_capability = { requestPermission = true, saveDocument = true, elicitation = true }

return M
