-- The cases of a prompt test file (`*.test.yaml`) and where each stands, read
-- from its lines for neotest's tree before anything runs: the items of the
-- top-level `cases:` block list and the `name:` of each (plain, single- or
-- double-quoted). A case whose name this reading cannot find (a flow-style
-- list, a name in a block scalar) is left out of the tree; the binary still
-- runs it and reports it under its file.
local M = {}

local function indent_of(line)
  return #line:match('^ *')
end

local function blank_or_comment(line)
  return line:match('^%s*$') or line:match('^%s*#')
end

-- The value of a one-line YAML scalar `text` (after `name:`), or nil when it is
-- not one this reading knows.
function M.scalar(text)
  text = vim.trim(text)
  local first = text:sub(1, 1)
  if first == '"' then
    local quoted = text:match('^(".-[^\\]")') or text:match('^("")')
    if not quoted then
      return nil
    end
    -- YAML's double-quoted escapes that JSON shares (\" \\ \n \t \uXXXX ...).
    local ok, value = pcall(vim.json.decode, quoted)
    return ok and type(value) == 'string' and value or nil
  elseif first == "'" then
    local body = text:match("^'(.-)'%s*$") or text:match("^'(.-)'%s+#")
    return body and (body:gsub("''", "'")) or nil
  elseif first == '' or first:match('[|>&*!%[{@`]') then
    return nil -- empty, a block scalar, an anchor, alias, tag or flow collection
  end
  -- A plain scalar ends at ` #` (a comment).
  return vim.trim((text:gsub('%s+#.*$', '')))
end

-- The cases in `lines` (a list of strings): { name, range = {start_row,
-- start_col, end_row, end_col} } (0-based rows; a case starts at its mapping,
-- after the `- `, and ends at its last line that is not blank or a comment).
function M.read(lines)
  local start
  for i, line in ipairs(lines) do
    if line:match('^cases:%s*$') or line:match('^cases:%s+#') then
      start = i + 1
      break
    end
  end
  if not start then
    return {}
  end
  local item_indent
  local cases, current = {}, nil
  local function close(last_row)
    if current then
      current.range[3] = last_row
      current.range[4] = #lines[last_row + 1]
      table.insert(cases, current)
      current = nil
    end
  end
  local last_content
  for i = start, #lines do
    local line = lines[i]
    if not blank_or_comment(line) then
      local indent = indent_of(line)
      local rest = line:sub(indent + 1)
      local is_item = rest == '-' or rest:sub(1, 2) == '- '
      if item_indent == nil then
        if not is_item then
          break -- not a block list (a flow list, or no cases)
        end
        item_indent = indent
      end
      if indent < item_indent or (indent == item_indent and not is_item) then
        break -- the list ended: the next top-level key
      end
      if indent == item_indent and is_item then
        close(last_content)
        local gap = rest:match('^%-( +)')
        -- The case's mapping starts after `- ` (or on the next line after a lone `-`).
        current = { keys_indent = gap and (indent + 1 + #gap) or nil }
        current.range = { i - 1, current.keys_indent or indent, i - 1, #line }
        local value = gap and rest:sub(#gap + 2):match('^name:%s*(.*)$')
        if value then
          current.name = M.scalar(value)
        end
      elseif current then
        current.keys_indent = current.keys_indent or indent
        local value = rest:match('^name:%s*(.*)$')
        if current.name == nil and indent == current.keys_indent and value then
          current.name = M.scalar(value)
        end
      end
      last_content = i - 1
    end
  end
  close(last_content)
  return vim.tbl_filter(function(case)
    case.keys_indent = nil
    return type(case.name) == 'string'
  end, cases)
end

return M
