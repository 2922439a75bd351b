;;; promptforge-eglot.el --- PromptForge prompts in Eglot  -*- lexical-binding: t -*-

;; `promptforge lsp' for Markdown prompts and `*.test.yaml' prompt tests.
;; Needs Eglot (built in from Emacs 29; the `eglot' package before) and
;; markdown-mode / yaml-mode (or yaml-ts-mode) for the major modes.
;;
;; Trust: a project's promptforge.toml is code (it can start programs and
;; hand them environment variables), and Eglot tells the server nothing
;; about trust, so the server trusts a promptforge.toml only when
;; `promptforge trust DIR' recorded it (untrusted, runs that need it are
;; refused).  If you decide to trust every project you edit in Emacs, end
;; the entry below with `:initializationOptions (:trusted t)':
;;   ("promptforge" "lsp" :initializationOptions (:trusted t))
(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs
               '((markdown-mode gfm-mode yaml-mode yaml-ts-mode)
                 . ("promptforge" "lsp"))))

(defun promptforge-eglot-document-p ()
  "Non-nil when this buffer is a prompt or a prompt test.
A prompt is named *.pf.md or starts with `---' and has a top-level
`promptforge:' key in its frontmatter; the server decides the rest."
  (and buffer-file-name
       (or (string-match-p "\\.\\(test\\.yaml\\|pf\\.md\\)\\'" buffer-file-name)
           (save-excursion
             (goto-char (point-min))
             (and (looking-at "---[ \t]*$")
                  (progn (forward-line 1)
                         (let ((end (save-excursion
                                      (and (re-search-forward "^---[ \t]*$" nil t)
                                           (point)))))
                           (and end (re-search-forward
                                     "^promptforge[ \t]*:" end t)))))))))

(defun promptforge-eglot-maybe-start ()
  "Start Eglot in a PromptForge buffer (other Markdown and YAML stay alone)."
  (when (promptforge-eglot-document-p)
    (eglot-ensure)))

(dolist (hook '(markdown-mode-hook gfm-mode-hook yaml-mode-hook yaml-ts-mode-hook))
  (add-hook hook #'promptforge-eglot-maybe-start))
