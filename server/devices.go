package server

import (
	"errors"
	"net/http"

	"github.com/pact-cli/pact/serverapi"
	"github.com/pact-cli/pact/store"
)

// mountDevices mounts enrolment and the device routes. Every
// authenticated route scopes its lookups to the caller's User: a device id
// of another User is NotFound("device"), the same answer as an id that
// does not exist.
func (s *Server) mountDevices() {
	s.Handle(Route{Method: http.MethodPost, Pattern: serverapi.PathEnrol, MaxBody: serverapi.MaxEnrolRequestSize, Handler: s.enrol})
	s.Handle(Route{Method: http.MethodGet, Pattern: serverapi.PathMe, Auth: true, Handler: s.me})
	s.Handle(Route{Method: http.MethodGet, Pattern: serverapi.PathDevices, Auth: true, Handler: s.devices})
	s.Handle(Route{Method: http.MethodGet, Pattern: serverapi.PathDevice, Auth: true, Handler: s.device})
	s.Handle(Route{Method: http.MethodPost, Pattern: serverapi.PathDeviceRevoke, Auth: true, MaxBody: 1 << 10, Handler: s.revoke})
	s.Handle(Route{Method: http.MethodPost, Pattern: serverapi.PathEnrolmentCodes, Auth: true, MaxBody: 1 << 10, Handler: s.addCode})
}

func (s *Server) me(w http.ResponseWriter, r *http.Request) error {
	c, _ := CallerFrom(r.Context())
	u, err := s.opts.Store.ServerUser(r.Context(), c.UserID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, serverapi.Me{Issuer: s.opts.Identity.Issuer(), User: serverapi.User{ID: u.ID, Name: u.Name}, Device: apiDevice(c.Device, c.DeviceID)})
	return nil
}

func (s *Server) devices(w http.ResponseWriter, r *http.Request) error {
	c, _ := CallerFrom(r.Context())
	ds, err := s.opts.Store.Devices(r.Context(), c.UserID)
	if err != nil {
		return err
	}
	out := make([]serverapi.Device, 0, len(ds))
	for _, d := range ds {
		out = append(out, apiDevice(d, c.DeviceID))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) device(w http.ResponseWriter, r *http.Request) error {
	c, _ := CallerFrom(r.Context())
	d, err := s.opts.Store.Device(r.Context(), r.PathValue("id"))
	if errors.Is(err, store.ErrServerNotFound) || (err == nil && d.UserID != c.UserID) {
		return NotFound("device")
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, apiDevice(d, c.DeviceID))
	return nil
}

// revoke answers POST /v1/devices/{id}/revoke: the device's next call is
// refused (authentication reads the revocation on every request).
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) error {
	c, _ := CallerFrom(r.Context())
	d, err := s.opts.Store.RevokeDevice(r.Context(), c.UserID, r.PathValue("id"), s.now())
	if errors.Is(err, store.ErrServerNotFound) {
		return NotFound("device")
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, apiDevice(d, c.DeviceID))
	return nil
}

// addCode answers POST /v1/enrolment-codes: a one-time code for another
// device of the caller's User (`pact devices add`).
func (s *Server) addCode(w http.ResponseWriter, r *http.Request) error {
	c, _ := CallerFrom(r.Context())
	u, err := s.opts.Store.ServerUser(r.Context(), c.UserID)
	if err != nil {
		return err
	}
	code, err := IssueCode(r.Context(), s.opts.Store, c.UserID, c.DeviceID, s.now())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, serverapi.EnrolmentCode{Code: code.Code, Expires: code.Expires, User: serverapi.User{ID: u.ID, Name: u.Name}})
	return nil
}
