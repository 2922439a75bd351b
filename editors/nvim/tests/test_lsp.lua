-- The client on real files: diagnostics at the right place and version, which
-- buffers get a server, and hover of an alias.
local H = require('helpers')

-- Every publishDiagnostics, recorded before Neovim applies it (it applies them
-- without comparing versions, so the test waits for the version it expects).
local published = {}
local original = vim.lsp.handlers['textDocument/publishDiagnostics']
vim.lsp.handlers['textDocument/publishDiagnostics'] = function(err, params, ctx, cfg)
  table.insert(published, params)
  return original(err, params, ctx, cfg)
end

local function wait_version(buf, version)
  local uri = vim.uri_from_bufnr(buf)
  return H.wait('diagnostics of version ' .. version, function()
    for i = #published, 1, -1 do
      if published[i].uri == uri and published[i].version == version then
        return published[i]
      end
    end
  end)
end

local function version(buf)
  return vim.lsp.util.buf_versions[buf]
end

H.setup()
local dir = H.scratch({
  ['p.md'] = H.prompt("local s = 'é😀'; return tools.call('nope')"),
  ['notes.md'] = '---\ntitle: notes\n---\n\n# Not a prompt\n',
  ['p.test.yaml'] = 'cases:\n  - name: one\n    expect:\n      result: "x"\n',
})

H.run('lsp', {
  { 'an error is reported at its line and column, for the version it describes', function()
    local buf, client = H.open(dir .. '/p.md')
    H.eq('utf-8', client.offset_encoding, 'negotiated encoding')
    -- The Lua line after astral and accented characters: the unbound alias.
    local params = wait_version(buf, version(buf))
    local row, line = H.line_of(buf, "tools%.call")
    local diag = vim.tbl_filter(function(d) return d.range.start.line == row end, params.diagnostics)[1]
    assert(diag, 'no diagnostic on line ' .. row .. ': ' .. vim.inspect(params.diagnostics))
    H.eq(line:find("'nope'", 1, true) - 1, diag.range.start.character, 'column (UTF-8 bytes) of ' .. diag.message)

    -- An edit that breaks the name, then a burst of edits ending fixed.
    vim.api.nvim_buf_set_lines(buf, 1, 2, false, { 'name: Bad Name' })
    local broken = wait_version(buf, version(buf))
    local bad = vim.tbl_filter(function(d) return d.code == 'Frontmatter' end, broken.diagnostics)[1]
    assert(bad, 'no Frontmatter diagnostic: ' .. vim.inspect(broken.diagnostics))
    H.eq({ line = 1, character = 6 }, bad.range.start, 'start of ' .. bad.message)
    H.wait('the diagnostic in vim.diagnostic', function()
      return #vim.tbl_filter(function(d) return d.lnum == 1 and d.col == 6 end, vim.diagnostic.get(buf)) == 1
    end)
    for i = 1, 5 do
      vim.api.nvim_buf_set_lines(buf, 1, 2, false, { 'name: p' .. (i < 5 and ' x' or '') })
    end
    local lua_row = H.line_of(buf, 'tools%.call')
    vim.api.nvim_buf_set_lines(buf, lua_row, lua_row + 1, false, { "return 'fixed é😀'" })
    local fixed = wait_version(buf, version(buf))
    H.eq({}, fixed.diagnostics, 'diagnostics after the fix')
  end },

  { 'Markdown without promptforge: gets no server; a test file shares the prompt\'s', function()
    vim.cmd.edit(dir .. '/notes.md')
    H.eq(0, #vim.lsp.get_clients({ bufnr = 0 }), 'clients of notes.md')
    local prompt_client = vim.lsp.get_clients({ bufnr = vim.fn.bufnr(dir .. '/p.md') })[1]
    local _, client = H.open(dir .. '/p.test.yaml')
    H.eq(prompt_client.id, client.id, 'the client of p.test.yaml')
    H.eq(vim.fs.normalize(dir), vim.fs.normalize(client.root_dir), 'root (the promptforge.toml folder)')
  end },

  { "hover of an alias shows the tool's catalog description", function()
    H.trust(H.repo .. '/examples/tools/promptforge.toml', 'allow')
    local buf = H.open(H.repo .. '/examples/tools/page-fetcher.md')
    local row = H.line_of(buf, '^  fetch: promptforge/web/fetch')
    vim.api.nvim_win_set_cursor(0, { row + 1, 3 })
    local function floats()
      local found = {}
      for _, win in ipairs(vim.api.nvim_list_wins()) do
        if vim.api.nvim_win_get_config(win).relative ~= '' then
          table.insert(found, win)
        end
      end
      return found
    end
    -- The Plugin's catalog is listed in the background: until it is, the hover
    -- says so. Hover again (as a user would) until the description is there.
    local text
    for _ = 1, 100 do
      for _, win in ipairs(floats()) do
        vim.api.nvim_win_close(win, true)
      end
      vim.lsp.buf.hover()
      text = H.wait('the hover window', function()
        local win = floats()[1]
        return win and H.text(vim.api.nvim_win_get_buf(win))
      end)
      if not text:find('still being listed', 1, true) then
        break
      end
      vim.wait(100)
    end
    assert(text:find('Fetch one web page by its http or https URL', 1, true), text)
    assert(text:find('promptforge/web/fetch', 1, true), text)
  end },
})
