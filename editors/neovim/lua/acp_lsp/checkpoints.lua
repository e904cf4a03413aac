--- "Restore checkpoint" (gz) and "Edit and resend" (ge) on the user message under the cursor
--- of a chat (acp/restoreCheckpoint, acp/rewindSession). Nothing changes on disk before the
--- user saw which files would, and said yes: the server is asked first with dryRun.
local client = require('acp_lsp.client')
local sessions = require('acp_lsp.sessions')
local protocol = require('acp_lsp.protocol')

local req = protocol.requests
local notify, fail = require('acp_lsp.log').notify, client.fail
local M = {}

local VERBS = { created = 'remove', deleted = 'bring back', modified = 'restore' }

--- The session and the ordinal (0-based, among its user messages) of the user message under
--- the cursor; nil and why when the cursor is elsewhere.
---@return acp_lsp.Session?, integer|string, table?
local function user_message_under_cursor()
  local item = require('acp_lsp.chat').item_at_cursor()
  local session = item and item.session
  local block = session and session.blocks[item.block]
  if not block or block.type ~= 'message' or block.role ~= 'user' then
    return nil, 'put the cursor on one of your messages in the chat'
  end
  local ordinal = 0
  for i = 1, item.block - 1 do
    local other = session.blocks[i]
    if other.type == 'message' and other.role == 'user' then
      ordinal = ordinal + 1
    end
  end
  return session, ordinal, block
end

--- The index in the server's `messages` of that user message: the chat keeps no indices, but
--- the server and the chat both hold each prompt as one user message, in order.
local function message_index(session, ordinal, cb)
  client.request(req.get_session, { sessionId = session.id }, function(err, snapshot)
    if err then
      return fail('checkpoint')(err)
    end
    local seen = 0
    for i, message in ipairs(snapshot.messages or {}) do
      if message.role == 'user' then
        if seen == ordinal then
          return cb(i - 1)
        end
        seen = seen + 1
      end
    end
    notify('acp-lsp: that message is no longer in the session', vim.log.levels.WARN)
  end)
end

--- One line per file: what restoring does to it, or why it is left as it is.
---@param files table[]
---@param cwd string
---@return string[]
function M.describe(files, cwd)
  local lines = {}
  for _, file in ipairs(files) do
    local path = vim.fs.relpath and vim.fs.relpath(cwd, file.path) or file.path
    if file.status == 'failed' then
      table.insert(lines, ('keep %s: %s'):format(path, file.message or 'cannot restore it'))
    elseif file.status == 'restored' then
      table.insert(lines, ('%s %s'):format(VERBS[file.change or 'modified'] or 'restore', path))
    end
  end
  return lines
end

local function count(n)
  return n == 1 and '1 file' or ('%d files'):format(n)
end

local function restored(files)
  return vim.tbl_filter(function(file)
    return file.status == 'restored'
  end, files)
end

--- What restoring would do (dryRun); cb(files).
local function plan(session, index, cb, quiet)
  local params = { sessionId = session.id, messageIndex = index, dryRun = true }
  client.request(req.restore_checkpoint, params, function(err, result)
    if err then
      return quiet and cb(nil) or fail('restore checkpoint')(err)
    end
    cb(result.files or {})
  end)
end

--- gz: put the files the session changed since the message under the cursor back, asked first.
function M.restore()
  local session, ordinal = user_message_under_cursor()
  if not session then
    return notify('acp-lsp: ' .. ordinal, vim.log.levels.WARN)
  end
  message_index(session, ordinal, function(index)
    plan(session, index, function(files)
      local changing = restored(files)
      if #changing == 0 then
        local kept = M.describe(files, session.cwd or '')
        return notify(
          #kept > 0 and ('acp-lsp: nothing restored; ' .. table.concat(kept, '; '))
            or 'acp-lsp: the files already read as they did before this message'
        )
      end
      local prompt = ('Restore %s to before this message?\n  %s\n'):format(
        count(#changing),
        table.concat(M.describe(files, session.cwd or ''), '\n  ')
      )
      vim.ui.select({ 'Restore', 'Cancel' }, { prompt = prompt }, function(choice)
        if choice ~= 'Restore' then
          return
        end
        local params = { sessionId = session.id, messageIndex = index }
        client.request(req.restore_checkpoint, params, function(err, result)
          if err then
            return fail('restore checkpoint')(err)
          end
          local failed = M.describe(
            vim.tbl_filter(function(file)
              return file.status == 'failed'
            end, result.files or {}),
            session.cwd or ''
          )
          local done = ('acp-lsp: restored %s to before that message'):format(
            count(#restored(result.files or {}))
          )
          if #failed > 0 then
            notify(done .. '; ' .. table.concat(failed, '; '), vim.log.levels.WARN)
          else
            notify(done)
          end
        end)
      end)
    end)
  end)
end

local function rewind(session, index, text, restore_files)
  local params = { sessionId = session.id, messageIndex = index, restoreFiles = restore_files }
  client.request(req.rewind_session, params, function(err, snapshot)
    if err then
      return fail('edit and resend')(err)
    end
    local rewound = sessions.load_snapshot(snapshot)
    local chat = require('acp_lsp.chat')
    chat.open(rewound, { focus = true })
    local view = chat.view(rewound)
    vim.api.nvim_buf_set_lines(view.input, 0, -1, false, vim.split(text, '\n', { plain = true }))
    chat.focus_input(rewound.id)
  end)
end

--- ge: a new session from before the message under the cursor, its text in the input to edit
--- and send again; the files go back too if the user says so.
function M.edit_resend()
  local session, ordinal, block = user_message_under_cursor()
  if not session then
    return notify('acp-lsp: ' .. ordinal, vim.log.levels.WARN)
  end
  local text = sessions.message_text(block)
  message_index(session, ordinal, function(index)
    plan(session, index, function(files)
      local changing = files and restored(files) or {}
      if #changing == 0 then
        return rewind(session, index, text, false)
      end
      local restore = ('Restore %s too'):format(count(#changing))
      local prompt = ('Edit and resend: restore the files changed since?\n  %s\n'):format(
        table.concat(M.describe(files, session.cwd or ''), '\n  ')
      )
      vim.ui.select({ restore, 'Keep the files', 'Cancel' }, { prompt = prompt }, function(choice)
        if choice and choice ~= 'Cancel' then
          rewind(session, index, text, choice == restore)
        end
      end)
    end, true)
  end)
end

return M
