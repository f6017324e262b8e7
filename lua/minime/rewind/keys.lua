--- The conversation's keys on an ask (its `> …` lines, minime.ui.turn.asks): `r` rewinds the
--- files to before it (asking first when that goes back more than the last ask); `e` opens the
--- input with its text to edit and resend: once sent, the files go back to before it (as `r`)
--- and the host continues the conversation from before it (nvim/resend.py: the session forked
--- where the agent forks, else a new one given the history), the edited ask its next turn.
--- Each returns false when the row is on no ask (the key is then Vim's).
local M = {}

local function say(text, level)
  require("minime.ui.say").say("minime: " .. text, level or vim.log.levels.INFO)
end

--- The ask at `row` of conversation `buf`, or nil; said when the row is an ask's but it cannot
--- be used (handled: true).
---@return {key: string, n: integer, text: string}?, boolean handled
local function ask_at(buf, row)
  local ask, why = require("minime.ui.turn.asks").at(buf, row)
  if not ask and why and not why:match("^not on an ask") and why ~= "not a conversation" then
    say(why, vim.log.levels.WARN)
    return nil, true
  end
  return ask, ask ~= nil
end

---@param buf integer
---@param row integer
---@return boolean
function M.rewind_at(buf, row)
  local ask, handled = ask_at(buf, row)
  if ask then
    require("minime.rewind").run(ask.key, ask.n, { ask_first = true })
  end
  return handled
end

--- Send the resend of ask `n` of thread `key` with `text` (the files went back: `summary`).
local function resend(key, n, text, summary)
  require("minime.review.checkpoints").truncate(key, n)
  require("minime.ui.turn.asks").stale_from(key, n)
  local actions = require("minime.actions")
  local ok, err = pcall(function()
    local payload = actions.host_payload(key)
    payload.prompt = text
    payload.before = n
    payload.files = summary:match("^[^;]*")
    payload.queue = false
    local config = require("minime.config")
    local ctx = { deny = config.options.deny, max_bytes = config.options.mention_max_bytes }
    require("minime.editor.mentions").collect(text, payload.cwd, ctx, function(mentions)
      payload.mentions = mentions
      require("minime.ui.drafts").clear(key)
      require("minime.host").notify("resend", payload)
    end)
  end)
  if not ok then
    say(tostring(err), vim.log.levels.ERROR)
  end
end

---@param buf integer
---@param row integer
---@return boolean
function M.edit_at(buf, row)
  local ask, handled = ask_at(buf, row)
  if not ask then
    return handled
  end
  local rewind = require("minime.rewind")
  local why = rewind.refusal(ask.key)
  if why then
    say(why, vim.log.levels.WARN)
    return true
  end
  require("minime.ui.input").open({
    prompt_title = (" edit ask %d: the files and the conversation go back to before it "):format(
      ask.n
    ),
    cwd = require("minime.threads").cwd_of(ask.key),
    default = ask.text,
    on_submit = function(text)
      if not text or vim.trim(text) == "" then
        return
      end
      require("minime.ui.drafts").set(ask.key, text) -- kept should the rewind not happen
      rewind.run(ask.key, ask.n, {
        on_done = function(summary)
          resend(ask.key, ask.n, text, summary)
        end,
      })
    end,
  })
  return true
end

return M
