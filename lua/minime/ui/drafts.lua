--- What was typed for an ask and not sent, per cwd: the input float closed without sending
--- (<Esc><Esc>, q, <C-c>, :q), or an ask the host refused (a turn already running). The next
--- input of that cwd (`i` in the conversation, :MiniMeAsk with no text) opens with it; sending
--- clears it. Kept for the Neovim session only.
local M = {}

---@type table<string, string>
local drafts = {}

--- The host's key for `cwd` (its real path), so a reply from the conversation of a cwd and
--- :MiniMeAsk in it share one draft.
---@param cwd string
local function key(cwd)
  return vim.uv.fs_realpath(cwd) or cwd
end

---@param cwd string
---@return string|nil
function M.get(cwd)
  return drafts[key(cwd)]
end

--- Keep `text` as the draft of `cwd` (blank text clears it).
---@param cwd string
---@param text string
function M.set(cwd, text)
  drafts[key(cwd)] = vim.trim(text) ~= "" and text or nil
end

--- Keep `text` too: after the draft already kept, when there is one and it differs (a refused
--- ask never overwrites text typed earlier).
---@param cwd string
---@param text string
function M.add(cwd, text)
  local old = M.get(cwd)
  if old and vim.trim(old) ~= "" and old ~= text then
    text = old .. "\n\n" .. text
  end
  M.set(cwd, text)
end

---@param cwd string
function M.clear(cwd)
  drafts[key(cwd)] = nil
end

return M
