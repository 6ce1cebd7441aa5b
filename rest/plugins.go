package rest

import (
	"net/http"
	"sort"
	"strings"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/runtime"
	"github.com/labstack/echo/v4"
)

// pluginBody is Kafka Connect's PluginInfo.
type pluginBody struct {
	Class   string `json:"class"`
	Type    string `json:"type"`
	Version string `json:"version"`
}

// listPlugins serves GET /connector-plugins: connectors only by default;
// with connectorsOnly=false also converters, header converters,
// transformations and predicates (ConnectorPluginsResource, KIP-769).
func (s *Server) listPlugins(c echo.Context) error {
	out := []pluginBody{}
	for _, cl := range s.plugins.SourceClasses() {
		f, _, _ := s.plugins.Source(cl)
		out = append(out, pluginBody{Class: cl, Type: connect.PluginSource, Version: f().Version()})
	}
	for _, cl := range s.plugins.SinkClasses() {
		f, _, _ := s.plugins.Sink(cl)
		out = append(out, pluginBody{Class: cl, Type: connect.PluginSink, Version: f().Version()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Class < out[j].Class })
	if strings.EqualFold(c.QueryParam("connectorsOnly"), "false") {
		for _, p := range s.plugins.OtherPlugins() {
			v := p.Version
			if v == "" {
				v = "undefined" // PluginUtils.UNDEFINED_VERSION
			}
			out = append(out, pluginBody{Class: p.Class, Type: p.Type, Version: v})
		}
	}
	return writeJSON(c, http.StatusOK, out)
}

// configKeyBody is Kafka Connect's ConfigKeyInfo, fields in its order.
type configKeyBody struct {
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	Required      bool     `json:"required"`
	DefaultValue  *string  `json:"default_value"`
	Importance    string   `json:"importance"`
	Documentation string   `json:"documentation"`
	Group         *string  `json:"group"`
	Width         string   `json:"width"`
	DisplayName   string   `json:"display_name"`
	Dependents    []string `json:"dependents"`
	Order         int      `json:"order_in_group"`
}

func keyBody(k connect.KeyInfo) configKeyBody {
	deps := k.Dependents
	if deps == nil {
		deps = []string{}
	}
	return configKeyBody{Name: k.Name, Type: k.Type, Required: k.Required, DefaultValue: k.Default, Importance: k.Importance,
		Documentation: k.Doc, Group: k.Group, Width: k.Width, DisplayName: k.DisplayName, Dependents: deps, Order: k.OrderInGroup}
}

// pluginConfig serves GET /connector-plugins/{p}/config: a ConfigKeyInfo
// list (AbstractHerder.connectorPluginConfig).
func (s *Server) pluginConfig(c echo.Context) error {
	keys, err := s.worker.Herder.PluginConfig(c.Param("plugin"))
	if err != nil {
		return err
	}
	out := make([]configKeyBody, len(keys))
	for i, k := range keys {
		out[i] = keyBody(k)
	}
	return writeJSON(c, http.StatusOK, out)
}

// configValueBody is ConfigValueInfo; configInfoBody ConfigInfo;
// configInfosBody ConfigInfos.
type configValueBody struct {
	Name              string   `json:"name"`
	Value             *string  `json:"value"`
	RecommendedValues []string `json:"recommended_values"`
	Errors            []string `json:"errors"`
	Visible           bool     `json:"visible"`
}

type configInfoBody struct {
	Definition *configKeyBody   `json:"definition"`
	Value      *configValueBody `json:"value"`
}

type configInfosBody struct {
	Name       string           `json:"name"`
	ErrorCount int              `json:"error_count"`
	Groups     []string         `json:"groups"`
	Configs    []configInfoBody `json:"configs"`
}

func infosBody(ci runtime.ConfigInfos) configInfosBody {
	out := configInfosBody{Name: ci.Name, ErrorCount: ci.ErrorCount, Groups: ci.Groups, Configs: []configInfoBody{}}
	for _, c := range ci.Configs {
		var b configInfoBody
		if c.Definition != nil {
			k := keyBody(*c.Definition)
			b.Definition = &k
		}
		if c.Value != nil {
			v := configValueBody{Name: c.Value.Name, Value: c.Value.Value, RecommendedValues: c.Value.Recommended, Errors: c.Value.Errors, Visible: c.Value.Visible}
			if v.RecommendedValues == nil {
				v.RecommendedValues = []string{}
			}
			if v.Errors == nil {
				v.Errors = []string{}
			}
			b.Value = &v
		}
		out.Configs = append(out.Configs, b)
	}
	return out
}

// normalizedPluginName is ConnectorPluginsResource.normalizedPluginName.
func normalizedPluginName(n string) string { return strings.TrimSuffix(n, "Connector") }

// validateConfig serves PUT /connector-plugins/{p}/config/validate: 200
// with ConfigInfos, whatever the number of errors
// (ConnectorPluginsResource.validateConfigs). POST /connectors and PUT
// config reject a config with the same messages.
func (s *Server) validateConfig(c echo.Context) error {
	plugin := c.Param("plugin")
	raw, err := decodeConfig(c)
	if err != nil {
		return err
	}
	cfg := map[string]string{}
	for k, v := range raw {
		if v != nil {
			cfg[k] = *v
		}
	}
	if included, ok := cfg["connector.class"]; ok && !strings.HasSuffix(normalizedPluginName(included), normalizedPluginName(plugin)) {
		return &runtime.BadRequestError{Msg: "Included connector type " + included + " does not match request type " + plugin}
	}
	ci, err := s.worker.Herder.ValidateConnectorConfig(cfg)
	if err != nil {
		return err
	}
	for k, v := range raw {
		if v == nil {
			ci.Configs = append(ci.Configs, runtime.ConfigInfo{Value: &connect.ConfigValue{Name: k, Errors: []string{"Null value can not be supplied as the configuration value."}, Visible: true}})
			ci.ErrorCount++
		}
	}
	return writeJSON(c, http.StatusOK, infosBody(ci))
}
