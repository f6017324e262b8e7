--- What was typed for an ask and not sent, per thread: the input float closed without sending
--- (<Esc><Esc>, q, <C-c>, :q), or an ask the host refused (a turn already running). The next
--- input of that thread (`i` in its conversation, :MiniMeAsk with no text) opens with it;
--- sending clears it. Kept for the Neovim session only.
local M = {}

---@type table<string, string>
local drafts = {}

--- The thread `key` names: a thread id, or a cwd (its current thread).
---@param key string
---@return string
local function key_of(key)
  local threads = package.loaded["minime.threads"]
  return threads and threads.key(key) or key
end

---@param key string
---@return string|nil
function M.get(key)
  return drafts[key_of(key)]
end

--- Keep `text` as the draft of `key` (blank text clears it).
---@param key string
---@param text string
function M.set(key, text)
  drafts[key_of(key)] = vim.trim(text) ~= "" and text or nil
end

--- Keep `text` too: after the draft already kept, when there is one and it differs (a refused
--- ask never overwrites text typed earlier).
---@param key string
---@param text string
function M.add(key, text)
  local old = M.get(key)
  if old and vim.trim(old) ~= "" and old ~= text then
    text = old .. "\n\n" .. text
  end
  M.set(key, text)
end

---@param key string
function M.clear(key)
  drafts[key_of(key)] = nil
end

return M
