;;; acp-lsp.el --- eglot extras for acp-lsp  -*- lexical-binding: t -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: tools, convenience

;;; Commentary:

;; Optional.  acp-lsp needs no Emacs package: eglot alone runs agents
;; through code actions and `workspace/executeCommand'.  This file only
;; smooths one thing.  Agents such as Claude Code edit files and run
;; commands on disk themselves; acp-lsp then brings your open buffer to the
;; new disk text (your unsaved edits merged on top) with a versioned
;; `workspace/applyEdit', followed by the notification
;; `acp/documentsSynced'.  Without this file Emacs sees a buffer whose file
;; changed behind it and asks about it twice: when the edit arrives
;; ("FILE changed on disk.  Discard your edits?", or "Reread from disk?"
;; for a buffer without edits) and when you save ("FILE has changed since
;; visited or saved.  Save anyway?").
;;
;; With it:
;; - an edit from acp-lsp is applied without the "changed on disk"
;;   question (acp-lsp already merged your unsaved edits; reloading would
;;   throw them away, and for a buffer without edits eglot 1.9 would then
;;   apply the change a second time on top of the reloaded text);
;; - on `acp/documentsSynced' each buffer takes its file on disk as read
;;   (`set-visited-file-modtime'), so saving asks nothing, and a buffer
;;   that now equals its file is marked unmodified;
;; - when your unsaved edits overlap the agent's change, acp-lsp leaves
;;   your buffer as it was and this file says so; saving then still asks,
;;   as it should: it would overwrite the agent's change.
;;
;; Use:
;;   (add-to-list 'load-path "/path/to/acp-lsp/editors/emacs")
;;   (with-eval-after-load 'eglot (require 'acp-lsp))

;;; Code:

(require 'cl-lib)
(require 'eglot)

(defun acp-lsp--server-p (server)
  "Non-nil when SERVER is acp-lsp (its `serverInfo' name)."
  (equal (plist-get (eglot--server-info server) :name) "acp-lsp"))

(cl-defmethod eglot-handle-request :around
  (server (_method (eql workspace/applyEdit)) &rest _)
  "Apply SERVER's edit without the changed-on-disk question (acp-lsp only).
eglot 1.9 opens each edited file with `find-file-noselect', which asks
about a buffer whose file changed on disk.  acp-lsp's edit for such a
buffer is the disk's new text with your unsaved edits merged; it is
versioned, so a buffer that changed since is refused, not overwritten."
  (if (not (acp-lsp--server-p server))
      (cl-call-next-method)
    (let ((find-file (symbol-function 'find-file-noselect)))
      (cl-letf (((symbol-function 'find-file-noselect)
                 (lambda (filename &optional _nowarn rawfile wildcards)
                   (funcall find-file filename t rawfile wildcards))))
        (cl-call-next-method)))))

(cl-defmethod eglot-handle-notification
  (server (_method (eql acp/documentsSynced)) &key documents
          &allow-other-keys)
  "SERVER (acp-lsp) brought the buffers of DOCUMENTS up to the disk."
  (when (acp-lsp--server-p server)
    (mapc #'acp-lsp--synced documents)))

(defun acp-lsp--synced (document)
  "Take the file of DOCUMENT {uri, version, matchesDisk?, conflict?} as read."
  (let ((buffer (find-buffer-visiting
                 (eglot--uri-to-path (plist-get document :uri)))))
    (when buffer
      (with-current-buffer buffer
        (if (eq (plist-get document :conflict) t)
            (message "acp-lsp: %s changed on disk where you have unsaved \
edits; your buffer was kept (saving it overwrites the agent's change)"
                     (buffer-name))
          (set-visited-file-modtime)
          (when (and (eq (plist-get document :matchesDisk) t)
                     ;; nothing typed since the edit that brought it there
                     (equal (plist-get document :version)
                            eglot--versioned-identifier))
            (set-buffer-modified-p nil)))))))

(provide 'acp-lsp)
;;; acp-lsp.el ends here
