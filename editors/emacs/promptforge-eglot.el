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
A prompt is named *.pf.md or its frontmatter may have a top-level
`promptforge:' key (`promptforge-eglot-frontmatter-p'); the server decides
the rest."
  (and buffer-file-name
       (or (string-match-p "\\.\\(test\\.yaml\\|pf\\.md\\)\\'" buffer-file-name)
           (promptforge-eglot-frontmatter-p))))

(defun promptforge-eglot-frontmatter-p ()
  "Non-nil when the buffer's frontmatter may have a top-level `promptforge:' key.
The frontmatter is opened by a `---' line (after any blank lines) and runs
to the next `---' line or the end.  It errs on the side of a prompt, as the
other editors do: a `promptforge:' key at the start of a line or indented as
the first line; in flow style or with an explicit key, a tag or an anchor,
the word promptforge outside a comment."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char (point-min))
      (when (eq (char-after) #xFEFF) (forward-char 1))
      (let ((case-fold-search nil) opened top other word)
        (catch 'answer
          (while (and (not (eobp)) (looking-at "\\([^\r\n]*\\)\\(?:\r\n\\|[\r\n]\\)?"))
            (let ((line (match-string-no-properties 1)))
              (goto-char (match-end 0))
              (cond ((not opened)
                     (cond ((string= line "---") (setq opened t))
                           ((not (string-match-p "\\`[ \t]*\\'" line)) (throw 'answer nil))))
                    ((string= line "---") (throw 'answer (and other word)))
                    ((string-match-p "\\`[ \t]*\\(#\\|\\'\\)" line))
                    (t
                     (string-match "\\`[ \t]*" line)
                     (unless top (setq top (match-string 0 line)))
                     (when (and (string-match "\\`\\([ \t]*\\)[\"']?promptforge[\"']?[ \t]*:" line)
                                (member (match-string 1 line) (list "" top)))
                       (throw 'answer t))
                     (setq other (or other (string-match-p "\\`[ \t]*[{?!&]" line))
                           word (or word (string-match-p "\\(?:\\`\\|[^[:alnum:]_-]\\)promptforge\\(?:\\'\\|[^[:alnum:]_-]\\)" line)))))))
          (and opened other word))))))

(defun promptforge-eglot-maybe-start ()
  "Start Eglot in a PromptForge buffer (other Markdown and YAML stay alone)."
  (when (promptforge-eglot-document-p)
    (eglot-ensure)))

(dolist (hook '(markdown-mode-hook gfm-mode-hook yaml-mode-hook yaml-ts-mode-hook))
  (add-hook hook #'promptforge-eglot-maybe-start))
