-- Loaded into the benchmarked Neovim (bench/nvim_bench.py): global B. One turn at a time:
-- B.start() returns at once, the turn streams while Neovim sits in its main loop (so typed
-- keys and redraws happen as they would for a user), the driver polls B.done.
local B = {}
_G.B = B

local hr = vim.uv.hrtime
local function ms(ns)
  return ns / 1e6
end

function B.setup(cmd, settings)
  require('acp_lsp').setup({ cmd = cmd, settings = settings, statusline = false })
end

function B.new_session()
  B.sid = nil
  require('acp_lsp').new_session('flood', { focus = false }, function(s)
    B.sid = s.id
  end)
end

--- Keystrokes: a timer "types" `x` into the normal buffer every `every` ms on a fixed
--- schedule; a key's latency runs from when it was due to when the buffer holds it, so a
--- main loop busy with the chat delays both the timer and the key, as it would a real key.
local function start_typing(buf, every)
  local due, done = {}, {}
  vim.api.nvim_buf_attach(buf, false, {
    on_lines = function()
      if B.typing then
        table.insert(done, hr())
      end
    end,
  })
  local timer = assert(vim.uv.new_timer())
  local t0 = hr()
  local k = 0
  local function tick()
    local now = hr()
    -- Keys due while the loop was blocked arrived meanwhile: each is typed now, late.
    while t0 + k * every * 1e6 <= now do
      table.insert(due, t0 + k * every * 1e6)
      k = k + 1
      -- The low-level input queue, as a terminal's key (nvim_input is allowed here).
      vim.api.nvim_input('x')
    end
    timer:start(math.max(0, math.ceil(ms(t0 + k * every * 1e6 - hr()))), 0, tick)
  end
  B.typing = true
  timer:start(every, 0, tick)
  -- Stop; cb(latencies, typed) once the keys still in typeahead were handled (in the main
  -- loop: vim.wait would not handle typed keys).
  return function(cb)
    timer:stop()
    timer:close()
    local waited = 0
    local function drain()
      if #done < #due and waited < 2000 then
        waited = waited + 10
        return vim.defer_fn(drain, 10)
      end
      B.typing = false
      local lat = {}
      for i = 1, math.min(#due, #done) do
        table.insert(lat, ms(done[i] - due[i]))
      end
      cb(lat, #due)
    end
    drain()
  end
end

--- Start a turn. `marker`: text whose arrival at the end of the chat buffer is the last text
--- (nil: the end of the turn, the acp/prompt answer, is).
function B.start(prompt, marker, tail, key_every_ms)
  if marker == vim.NIL then
    marker = nil
  end
  local sessions = require('acp_lsp.sessions')
  local client = require('acp_lsp.client')
  local protocol = require('acp_lsp.protocol')
  local session = sessions.by_id[B.sid]
  local view = require('acp_lsp.chat').views[B.sid]
  B.done, B.r = false, {}
  local r = B.r
  local stop_typing
  local function at_end(win)
    local n = vim.api.nvim_buf_line_count(view.buf)
    local len = vim.api.nvim_buf_get_offset(view.buf, n) - vim.api.nvim_buf_get_offset(view.buf, n - 1) - 1
    local cursor = vim.api.nvim_win_get_cursor(win)
    return cursor[1] == n and cursor[2] >= len - 1
  end
  local function visible()
    -- The text is in the buffer (this runs inside the change). Once the plugin's handler has
    -- returned and the chat's cursor has followed the end (at once, or a loop turn later where
    -- the plugin defers it: looked at once per loop turn), a redraw puts it on screen.
    local function shown()
      r.shown_ms = ms(hr() - r.t0)
      vim.cmd('redraw')
      r.redraw_ms = ms(hr() - r.t0) - r.shown_ms
      local win = vim.fn.bufwinid(view.buf)
      r.cursor_at_end = win ~= -1 and at_end(win)
      r.visible_ms = ms(hr() - r.t0)
      r.chat_lines = vim.api.nvim_buf_line_count(view.buf)
      r.chat_bytes = vim.api.nvim_buf_get_offset(view.buf, r.chat_lines)
      stop_typing(function(lat, typed)
        table.sort(lat)
        r.keys, r.keys_typed = #lat, typed
        local function pct(q)
          return #lat > 0 and lat[math.max(1, math.ceil(q / 100 * #lat))] or 0
        end
        r.key_p50, r.key_p99, r.key_max = pct(50), pct(99), lat[#lat] or 0
        vim.cmd('stopinsert')
        if os.getenv('NVIM_BENCH_PROFILE') then
          require('jit.p').stop()
        end
        B.done = true
      end)
    end
    local win, turns = vim.fn.bufwinid(view.buf), 0
    local function followed()
      turns = turns + 1
      if win == -1 or turns >= 5 or at_end(win) then
        r.follow_turns = turns
        return shown()
      end
      vim.schedule(followed)
    end
    vim.schedule(followed)
  end
  if marker then
    vim.api.nvim_buf_attach(view.buf, false, {
      on_lines = function(_, buf)
        if r.text_ms then
          return true
        end
        -- Only the last `tail` bytes of the buffer: the flood's text is one very long
        -- paragraph, one line or (cut by the plugin) several, joined here without breaks.
        local n = vim.api.nvim_buf_line_count(buf)
        local stop = vim.api.nvim_buf_get_offset(buf, n)
        local row = n - 1
        while row > 0 and stop - vim.api.nvim_buf_get_offset(buf, row) < tail do
          row = row - 1
        end
        local len = vim.api.nvim_buf_get_offset(buf, row + 1) - vim.api.nvim_buf_get_offset(buf, row)
        local after = stop - vim.api.nvim_buf_get_offset(buf, row + 1) -- bytes of the rows below
        local from = math.max(0, len - 1 - math.max(0, tail - after))
        local last = table.concat(vim.api.nvim_buf_get_text(buf, row, from, n - 1, -1, {}))
        if last:find(marker, 1, true) then
          r.text_ms = ms(hr() - r.t0)
          visible()
          return true
        end
      end,
    })
  end
  -- The plugin's own share: time inside the notification handler, and when the last one came.
  r.handler_ms, r.notifications = 0, 0
  local handle = sessions.handle_update
  sessions.handle_update = function(params)
    local t = hr()
    handle(params)
    r.handler_ms = r.handler_ms + ms(hr() - t)
    r.notifications = r.notifications + 1
    r.last_notification_ms = ms(t - r.t0)
  end
  -- As a user would have typed it: the prompt in the chat's (markdown) input, shown, then
  -- cleared as sending clears it. Neovim compiles the markdown highlight queries at their
  -- first use (about 6 ms); a typed prompt has them ready before the turn starts.
  vim.api.nvim_buf_set_lines(view.input, 0, -1, false, { prompt })
  vim.cmd('redraw')
  vim.api.nvim_buf_set_lines(view.input, 0, -1, false, {})
  if os.getenv('NVIM_BENCH_PROFILE') then
    require('jit.p').start('Fl3', os.getenv('NVIM_BENCH_PROFILE'))
  end
  local work = vim.api.nvim_get_current_buf()
  vim.cmd('startinsert')
  stop_typing = start_typing(work, key_every_ms)
  sessions.add_user_prompt(session, prompt)
  r.t0 = hr()
  client.request(protocol.requests.prompt, { sessionId = B.sid, prompt = prompt }, function(err)
    r.answer_ms = ms(hr() - r.t0)
    r.error = err and vim.inspect(err) or nil
    if not marker or err then
      r.text_ms = r.answer_ms
      visible()
    end
  end)
end

--- The measurement's floor: the same typing for `ms_total` ms with no turn running.
function B.idle_keys(ms_total, key_every_ms)
  B.done, B.r = false, {}
  vim.cmd('startinsert')
  local stop_typing = start_typing(vim.api.nvim_get_current_buf(), key_every_ms)
  vim.defer_fn(function()
    stop_typing(function(lat, typed)
      table.sort(lat)
      local function pct(q)
        return #lat > 0 and lat[math.max(1, math.ceil(q / 100 * #lat))] or 0
      end
      B.r =
        { keys = #lat, keys_typed = typed, key_p50 = pct(50), key_p99 = pct(99), key_max = lat[#lat] or 0 }
      vim.cmd('stopinsert')
      B.done = true
    end)
  end, ms_total)
end

-- A marathon session (issue 35): a stored session of the history, resumed as a user would
-- (:Acp history → Resume), then typing into its prompt input and scrolling its chat.

local screen_ns = vim.api.nvim_create_namespace('acp_bench_screen')
local redraws = {} -- hrtime of the end of each redraw while B.screen_watch is on
vim.api.nvim_set_decoration_provider(screen_ns, {
  on_end = function()
    if B.screen_watch then
      table.insert(redraws, hr())
    end
  end,
})

local function pct(sorted, q)
  return #sorted > 0 and sorted[math.max(1, math.ceil(q / 100 * #sorted))] or 0
end

--- Resume stored session `sid` through the plugin's history (acp/loadSession, then the chat
--- opens with its prompt input focused): B.r.open_ms once it is drawn.
function B.open_stored(sid, cwd)
  B.done, B.r = false, {}
  local r = B.r
  local chat = require('acp_lsp.chat')
  local open = chat.open
  chat.open = function(...)
    local a, b = open(...)
    chat.open = open
    r.shown_ms = ms(hr() - r.t0)
    vim.cmd('redraw')
    r.open_ms = ms(hr() - r.t0)
    B.sid = sid
    local view = chat.views[sid]
    r.chat_lines = vim.api.nvim_buf_line_count(view.buf)
    r.chat_bytes = vim.api.nvim_buf_get_offset(view.buf, r.chat_lines)
    B.done = true
    return a, b
  end
  r.t0 = hr()
  require('acp_lsp.history').resume({ sessionId = sid, agent = 'flood', cwd = cwd })
end

--- Type `x` every `every` ms for `total_ms` into the chat's prompt input (Insert mode, the
--- terminal's input queue). A key's latency: from when it was due to when the input buffer
--- holds it (key_*), and to the end of the first redraw after that (screen_*).
function B.type_prompt(total_ms, every)
  B.done, B.r = false, {}
  local r = B.r
  local view = require('acp_lsp.chat').views[B.sid]
  local win = vim.fn.bufwinid(view.input)
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_buf_set_lines(view.input, 0, -1, false, { '' })
  vim.cmd('startinsert')
  redraws = {}
  B.screen_watch = true
  local held = {}
  vim.api.nvim_buf_attach(view.input, false, {
    on_lines = function()
      if not B.screen_watch then
        return true
      end
      table.insert(held, hr())
    end,
  })
  local stop = start_typing(view.input, every)
  vim.defer_fn(function()
    stop(function(lat, typed)
      vim.cmd('redraw')
      B.screen_watch = false
      -- the due times: held[i] - lat[i]
      local screen = {}
      local j = 1
      for i = 1, math.min(#lat, #held) do
        local due = held[i] - lat[i] * 1e6
        while redraws[j] and redraws[j] < held[i] do
          j = j + 1
        end
        if redraws[j] then
          table.insert(screen, ms(redraws[j] - due))
        end
      end
      table.sort(lat)
      table.sort(screen)
      r.keys, r.keys_typed, r.keys_screen = #lat, typed, #screen
      r.key_p50, r.key_p99, r.key_max = pct(lat, 50), pct(lat, 99), lat[#lat] or 0
      r.screen_p50, r.screen_p99, r.screen_max = pct(screen, 50), pct(screen, 99), screen[#screen] or 0
      r.typed_text = #(vim.api.nvim_buf_get_lines(view.input, 0, 1, false)[1] or '')
      vim.cmd('stopinsert')
      B.done = true
    end)
  end, total_ms)
end

--- Scroll the chat window to the top (gg) and back to the bottom (G), `times` each, each
--- followed by a redraw: the medians and the worst, in ms.
function B.scroll(times)
  local view = require('acp_lsp.chat').views[B.sid]
  local win = vim.fn.bufwinid(view.buf)
  vim.api.nvim_set_current_win(win)
  local top, bottom, page = {}, {}, {}
  for _ = 1, times do
    for _, step in ipairs({ { 'gg', top }, { 'G', bottom }, { '\2', page } }) do
      local t = hr()
      vim.cmd('normal! ' .. step[1])
      vim.cmd('redraw')
      table.insert(step[2], ms(hr() - t))
    end
  end
  local out = {}
  for name, list in pairs({ top = top, bottom = bottom, page_up = page }) do
    table.sort(list)
    out[name .. '_ms'] = pct(list, 50)
    out[name .. '_max_ms'] = list[#list]
  end
  out.at_end = vim.api.nvim_win_get_cursor(win)[1] == vim.api.nvim_buf_line_count(view.buf)
  return out
end

return B
