package server

import (
	"log"

	"github.com/sirupsen/logrus"
)

// newStdLogger routes net/http's internal error log to l at the given level.
func newStdLogger(l *logrus.Entry, level logrus.Level) *log.Logger {
	return log.New(l.WriterLevel(level), "", 0)
}
