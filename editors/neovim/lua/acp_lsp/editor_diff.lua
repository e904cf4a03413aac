--- The openDiff editor tool {uri, newText, title?} -> {answer, text?}: the agent's proposed
--- text beside the file in a new tab (:diffthis). The user may edit the proposal, then keeps it
--- (ga or :w in it) or rejects it (gr, or closing it); the answer goes back to the agent, with
--- the text the user kept. The file itself is not changed here: the agent writes it.
local M = {}

---@class acp_lsp.PendingDiff
---@field session_id string?
---@field buf integer the proposal buffer
---@field file_buf integer
---@field tab integer
---@field from_tab integer the tab the user was in
---@field eol boolean the proposed text ends with a newline
---@field cleanup 'keep'|'unload'|'delete' what to do with the file buffer afterwards
---@field done fun(result: table)
---@field answered boolean?

---@type table<integer, acp_lsp.PendingDiff> by proposal buffer
M.pending = {}

local count = 0

local function close_view(entry)
  if vim.api.nvim_tabpage_is_valid(entry.tab) then
    if #vim.api.nvim_list_tabpages() > 1 then
      pcall(vim.cmd, 'tabclose ' .. vim.api.nvim_tabpage_get_number(entry.tab))
    else
      for _, win in ipairs(vim.api.nvim_tabpage_list_wins(entry.tab)) do
        vim.wo[win].diff = false
      end
    end
  end
  if vim.api.nvim_tabpage_is_valid(entry.from_tab) then
    vim.api.nvim_set_current_tabpage(entry.from_tab)
  end
  if vim.api.nvim_buf_is_valid(entry.buf) then
    pcall(vim.api.nvim_buf_delete, entry.buf, { force = true })
  end
  local fb = entry.file_buf
  if
    entry.cleanup ~= 'keep'
    and vim.api.nvim_buf_is_valid(fb)
    and not vim.bo[fb].modified
    and #vim.fn.win_findbuf(fb) == 0
  then
    vim.cmd(('silent! %s %d'):format(entry.cleanup == 'delete' and 'bdelete' or 'bunload', fb))
  end
end

--- Answer once; later calls (the wipe that closing the view causes) are ignored.
---@param entry acp_lsp.PendingDiff
---@param answer 'accept'|'reject'
function M.finish(entry, answer)
  if entry.answered then
    return
  end
  entry.answered = true
  M.pending[entry.buf] = nil
  local result = { answer = answer }
  if answer == 'accept' and vim.api.nvim_buf_is_valid(entry.buf) then
    local lines = vim.api.nvim_buf_get_lines(entry.buf, 0, -1, false)
    result.text = table.concat(lines, '\n') .. (entry.eol and '\n' or '')
  end
  -- Windows cannot be closed from inside the autocommands that may call this.
  vim.schedule(function()
    close_view(entry)
    entry.done(result)
  end)
end

---@param args table {uri, newText, title?}
---@param call acp_lsp.EditorToolCall
function M.open(args, call)
  local tools = require('acp_lsp.editor_tools')
  if type(args.uri) ~= 'string' or type(args.newText) ~= 'string' then
    return nil, 'openDiff needs uri and newText'
  end
  local fname = vim.uri_to_fname(args.uri)
  local text = args.newText:gsub('\r\n', '\n')
  local eol = text:sub(-1) == '\n'
  local lines = vim.split(eol and text:sub(1, -2) or text, '\n', { plain = true })
  local short = vim.fn.fnamemodify(fname, ':~:.')
  local title = (args.title and args.title ~= '') and ('%s (%s)'):format(short, args.title) or short

  -- Keys typed for the prompt or a command must not land in the proposal: it opens once the
  -- user is back in Normal mode.
  if vim.fn.mode() ~= 'n' then
    require('acp_lsp.log').notify(
      ('The agent proposes a change to %s: it opens when you leave %s mode'):format(
        title,
        vim.fn.mode() == 'i' and 'Insert' or 'this'
      ),
      vim.log.levels.INFO
    )
    tools.await(function(done)
      vim.api.nvim_create_autocmd('ModeChanged', {
        pattern = '*:n',
        once = true,
        callback = function()
          done()
        end,
      })
    end)
    local session = require('acp_lsp.sessions').by_id[call.session_id or '']
    if session and session.status ~= 'running' and session.status ~= 'awaiting_permission' then
      return { answer = 'reject' } -- the turn ended meanwhile: nobody waits for it
    end
  end

  local existing = tools.find_buf(fname)
  local cleanup = 'delete'
  if existing then
    cleanup = vim.api.nvim_buf_is_loaded(existing) and 'keep' or 'unload'
  end
  local from_tab = vim.api.nvim_get_current_tabpage()
  if existing then
    vim.cmd('tab sbuffer ' .. existing)
  else
    vim.cmd('tabedit ' .. vim.fn.fnameescape(fname))
  end
  local file_win, file_buf = vim.api.nvim_get_current_win(), vim.api.nvim_get_current_buf()
  -- A new window copies the options of the one it came from (maybe the chat's).
  vim.wo[file_win].winbar = 'Yours: %f'
  local tab = vim.api.nvim_get_current_tabpage()

  vim.cmd('rightbelow vnew')
  local buf, win = vim.api.nvim_get_current_buf(), vim.api.nvim_get_current_win()
  vim.bo[buf].buftype = 'acwrite' -- :w keeps the proposal (BufWriteCmd)
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  -- A URL-like name: not a file (Neovim keeps it as is); numbered when the file has several.
  local name = 'proposed://' .. short
  if vim.fn.bufexists(name) == 1 then
    count = count + 1
    name = ('%s (%d)'):format(name, count)
  end
  vim.api.nvim_buf_set_name(buf, name)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].filetype = vim.bo[file_buf].filetype
  vim.bo[buf].modified = false
  for _, w in ipairs({ file_win, win }) do
    vim.api.nvim_win_call(w, function()
      vim.cmd('diffthis')
    end)
  end
  vim.wo[win].winbar = ('Proposed: %s  (ga / :w keep · gr / :q reject)'):format(title:gsub('%%', '%%%%'))

  return tools.await(function(done)
    ---@type acp_lsp.PendingDiff
    local entry = {
      session_id = call.session_id,
      buf = buf,
      file_buf = file_buf,
      tab = tab,
      from_tab = from_tab,
      eol = eol,
      cleanup = cleanup,
      done = done,
    }
    M.pending[buf] = entry
    local opts = { buffer = buf, nowait = true, silent = true }
    vim.keymap.set('n', 'ga', function()
      M.finish(entry, 'accept')
    end, vim.tbl_extend('force', opts, { desc = 'Keep the proposed text' }))
    vim.keymap.set('n', 'gr', function()
      M.finish(entry, 'reject')
    end, vim.tbl_extend('force', opts, { desc = 'Reject the proposed text' }))
    vim.api.nvim_create_autocmd('BufWriteCmd', {
      buffer = buf,
      callback = function()
        vim.bo[buf].modified = false
        M.finish(entry, 'accept')
      end,
    })
    vim.api.nvim_create_autocmd('BufWipeout', {
      buffer = buf,
      callback = function()
        M.finish(entry, 'reject')
      end,
    })
    require('acp_lsp.log').notify(
      ('The agent proposes a change to %s: ga keeps it, gr rejects it'):format(title),
      vim.log.levels.INFO
    )
  end)
end

--- A session's turn ended (cancelled, failed, closed): nobody waits for its diffs.
---@param params table acp/sessionStatus params
function M.on_status(params)
  if params.status == 'running' or params.status == 'awaiting_permission' then
    return
  end
  for _, entry in pairs(M.pending) do
    if entry.session_id == params.sessionId then
      M.finish(entry, 'reject')
    end
  end
end

return M
