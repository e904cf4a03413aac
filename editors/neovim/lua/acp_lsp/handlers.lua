--- LSP handlers of the acp_lsp client (wired in config.lsp_config()).
--- Notifications feed the session model; server requests answer the server. Core handlers
--- do the standard work (edits, progress, messages); ours add what acp-lsp needs around them.
local sessions = require('acp_lsp.sessions')
local log = require('acp_lsp.log')

local M = {}

---@param params table
function M.session_update(_, params)
  sessions.handle_update(params)
  require('acp_lsp.attention').on_update(params)
  require('acp_lsp.hunks').on_update(params)
end

---@param params table
function M.session_status(_, params)
  sessions.handle_status(params)
  require('acp_lsp.permissions').on_status(params)
  require('acp_lsp.editor_tools').on_status(params)
  require('acp_lsp.attention').on_status(params)
  require('acp_lsp.queue').on_status(params)
  vim.cmd('redrawstatus!') -- the statusline component shows background sessions
end

---@param params table
function M.terminal_output(_, params)
  sessions.handle_terminal_output(params)
end

--- acp/requestPermission: runs in the coroutine Neovim gives every server request, so it can
--- wait for the user without blocking anything else.
function M.request_permission(_, params)
  return require('acp_lsp.permissions').request(params)
end

--- acp/editorTool: the editor's diagnostics, definitions, ... for agents (editor_tools.lua);
--- like acp/requestPermission it may wait (openDiff waits for the user).
function M.editor_tool(err, params, ctx)
  return require('acp_lsp.editor_tools').handle(err, params, ctx)
end

--- acp/elicitation: the agent asks a structured question (a prompt per field).
function M.elicitation(_, params)
  return require('acp_lsp.elicitation').request(params)
end

function M.elicitation_complete(_, params)
  require('acp_lsp.elicitation').complete(params)
end

--- acp/documentsSynced: buffers that now hold the new disk text (documents.lua).
function M.documents_synced(_, params)
  require('acp_lsp.documents').synced(params)
  require('acp_lsp.hunks').schedule() -- the buffer now holds the text the hunks are of
end

--- acp/saveDocument {uris} -> {saved}: write the buffers an agent edit touched, so the disk
--- matches before the agent runs commands.
function M.save_document(_, params)
  local saved = {}
  for _, uri in ipairs(params and params.uris or {}) do
    local ok, fname = pcall(vim.uri_to_fname, uri)
    local buf = ok and vim.fn.bufnr(fname) or -1
    if buf ~= -1 and vim.api.nvim_buf_is_loaded(buf) then
      if vim.bo[buf].modified then
        vim.fn.mkdir(vim.fs.dirname(fname), 'p')
        local wrote, err = pcall(vim.api.nvim_buf_call, buf, function()
          vim.cmd('silent update')
        end)
        if not wrote then
          log.add('warn', ('saveDocument: %s: %s'):format(fname, err))
        end
      end
      if not vim.bo[buf].modified then
        table.insert(saved, uri)
      end
    else
      log.add('warn', 'saveDocument: no buffer for ' .. uri)
    end
  end
  return { saved = saved }
end

--- window/showDocument: follow-along without stealing focus (see follow.lua).
function M.show_document(err, params, ctx)
  return require('acp_lsp.follow').show_document(err, params, ctx)
end

local function edit_uris(edit)
  local uris = {}
  for uri in pairs(edit.changes or {}) do
    table.insert(uris, uri)
  end
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.textDocument and change.textDocument.uri then
      table.insert(uris, change.textDocument.uri)
    end
  end
  return uris
end

--- A versioned text edit of a buffer that changed since the server saw it (the user typed,
--- or Neovim reloaded the file): {uri, version, current}, else nil.
local function stale_edit(edit)
  for _, change in ipairs(edit.documentChanges or {}) do
    local doc = change.textDocument
    if doc and type(doc.uri) == 'string' and type(doc.version) == 'number' and doc.version > 0 then
      local ok, fname = pcall(vim.uri_to_fname, doc.uri)
      for _, buf in ipairs(ok and vim.api.nvim_list_bufs() or {}) do
        if vim.api.nvim_buf_is_loaded(buf) and vim.api.nvim_buf_get_name(buf) == fname then
          local current = vim.lsp.util.buf_versions[buf]
          if current > doc.version then
            return { uri = doc.uri, version = doc.version, current = current }
          end
        end
      end
    end
  end
end

--- workspace/applyEdit: load and attach every target buffer first, so the server sees the
--- didOpen/didChange that proves the edit landed; then the core handler applies it (one undo
--- step per edit, unsaved user text kept). The label is logged rather than printed.
function M.apply_edit(err, params, ctx)
  local client_mod = require('acp_lsp.client')
  local documents = require('acp_lsp.documents')
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local targets, ticks = {}, {}
  local stale = params and params.edit and stale_edit(params.edit)
  if stale then
    -- Refused as a whole, with the reason: the core handler would skip that document, print
    -- "Buffer … newer than edits." and answer applied.
    local reason = ('%s changed since: version %d, the edit is for %d'):format(
      vim.fn.fnamemodify(vim.uri_to_fname(stale.uri), ':~:.'),
      stale.current,
      stale.version
    )
    log.add('info', 'edit refused: ' .. reason)
    return { applied = false, failureReason = reason }
  end
  if params and params.edit then
    for _, uri in ipairs(edit_uris(params.edit)) do
      local ok, fname = pcall(vim.uri_to_fname, uri)
      if ok and vim.uv.fs_stat(fname) then
        local buf = vim.fn.bufadd(fname)
        vim.fn.bufload(buf)
        vim.bo[buf].buflisted = true
        client_mod.attach(buf, client)
        table.insert(targets, buf)
        ticks[buf] = vim.b[buf].changedtick
      end
    end
    if params.label then
      log.add('info', 'edit: ' .. params.label)
      params = vim.tbl_extend('force', {}, params)
      params.label = nil
    end
  end
  -- The texts before the edit: an edit that brings a buffer to the file's new disk text is
  -- followed by acp/documentsSynced, which reloads from there (documents.lua).
  local before = documents.snapshot(targets)
  local core = vim.lsp.handlers['workspace/applyEdit']
  local result = core(err, params, ctx)
  documents.edited(before, ticks)
  if params and params.edit then
    -- Newly created files become buffers only inside the core handler.
    for _, uri in ipairs(edit_uris(params.edit)) do
      local ok, fname = pcall(vim.uri_to_fname, uri)
      local buf = ok and vim.fn.bufnr(fname) or -1
      if buf ~= -1 then
        client_mod.attach(buf, client)
      end
    end
  end
  return result
end

--- window/logMessage: keep a copy for :Acp log, then the core handler (LSP log file).
function M.log_message(err, params, ctx)
  if params then
    log.add(params.type or 4, params.message or '')
  end
  return vim.lsp.handlers['window/logMessage'](err, params, ctx)
end

function M.show_message(err, params, ctx)
  if params then
    log.add(params.type or 3, params.message or '')
    -- A disk conflict is told by acp/documentsSynced (documents.lua), not twice.
    local core = vim.lsp.handlers['window/showMessage']
    if
      require('acp_lsp.documents').server_warning(tostring(params.message or ''), function()
        core(err, params, ctx)
      end)
    then
      return params
    end
  end
  return vim.lsp.handlers['window/showMessage'](err, params, ctx)
end

--- workspace/configuration: section `acp` is the plugin's settings (JSON-ready).
function M.configuration(_, params)
  local config = require('acp_lsp.config')
  local out = {}
  for i, item in ipairs(params and params.items or {}) do
    if item.section == 'acp' or item.section == nil or item.section == '' then
      out[i] = config.json_settings(config.options.settings)
    else
      out[i] = vim.NIL
    end
  end
  return out
end

return M
