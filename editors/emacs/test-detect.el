;;; test-detect.el --- The snippet's prompt check against the shared corpus  -*- lexical-binding: t -*-

;; Run by ci.sh: emacs --batch -l test-detect.el (no server needed). Each file
;; of tests/detection is opened as Emacs visits it (BOM and line ends decoded)
;; and `promptforge-eglot-document-p' asked: every file the server takes for
;; a prompt is one here, and of the others those index.txt marks
;; `editors:prompt'. The exit status is 1 on any disagreement.

(require 'cl-lib)

(defvar pf-here (file-name-directory (or load-file-name buffer-file-name)))
(defvar pf-corpus (expand-file-name "../../tests/detection/" pf-here))

(load (expand-file-name "promptforge-eglot.el" pf-here) nil t)

(defun pf-index ()
  "The corpus index: a list of (FILE PROMPT-P EDITORS-P), the server's answer and the editors'."
  (with-temp-buffer
    (insert-file-contents (expand-file-name "index.txt" pf-corpus))
    (cl-loop for line in (split-string (buffer-string) "\n" t)
             unless (string-prefix-p "#" line)
             collect (let ((words (split-string line)))
                       (unless (member (nth 1 words) '("prompt" "not-a-prompt"))
                         (error "index.txt: %s" line))
                       (list (car words) (equal (nth 1 words) "prompt")
                             (or (equal (nth 1 words) "prompt") (equal (nth 2 words) "editors:prompt")))))))

(let* ((entries (pf-index))
       (wrong
        (cl-loop for (file prompt editors) in entries
                 for buffer = (find-file-noselect (expand-file-name file pf-corpus) t)
                 for said = (with-current-buffer buffer (and (promptforge-eglot-document-p) t))
                 do (kill-buffer buffer)
                 if (and prompt (not said))
                 collect (format "%s: the server takes it for a prompt, the snippet does not" file)
                 else if (not (eq said editors))
                 collect (format "%s: %s" file (if said "called a prompt, not marked editors:prompt"
                                                 "marked editors:prompt, rejected")))))
  (when (< (length entries) 50)
    (push (format "only %d corpus entries" (length entries)) wrong))
  (dolist (line wrong) (princ (format "not ok emacs detect: %s\n" line)))
  (princ (format "emacs detect: %d files, %d disagreements\n" (length entries) (length wrong)))
  (kill-emacs (if wrong 1 0)))
